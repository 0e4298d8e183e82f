"""DDL of the store (format version 2; version 1 kept extras as a long table). See the package docstring for the layout."""

FORMAT_VERSION = "2"

# 65,536 samples per block: one packed row is 8 KiB, so a paper-scale store
# (31,250 models x 1.7M samples) is ~26 blocks x 31,250 models = ~0.8M rows of 8 KiB.
BLOCK_SIZE = 65_536

DDL = """
CREATE TABLE store_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE datasets (
    dataset VARCHAR PRIMARY KEY, description VARCHAR NOT NULL, synthetic BOOLEAN NOT NULL,
    source VARCHAR NOT NULL, added_at TIMESTAMP NOT NULL);
CREATE TABLE domains (
    dataset VARCHAR NOT NULL, domain VARCHAR NOT NULL, category VARCHAR,
    added_at TIMESTAMP NOT NULL, PRIMARY KEY (dataset, domain));
CREATE TABLE models (
    model_idx INTEGER PRIMARY KEY, model_id VARCHAR NOT NULL UNIQUE, name VARCHAR NOT NULL,
    family VARCHAR, metadata VARCHAR NOT NULL, release_order INTEGER, estimated BOOLEAN NOT NULL,
    added_at TIMESTAMP NOT NULL);
-- No index on samples: at 1.7M samples two ART indexes would cost ~0.1 GB and slow every
-- import; the importer resolves ids against this table before writing, so ids stay unique.
CREATE TABLE samples (
    sample_idx INTEGER NOT NULL, sample_id VARCHAR NOT NULL, dataset VARCHAR NOT NULL,
    domain VARCHAR NOT NULL, label BIGINT, split VARCHAR, meta VARCHAR, added_at TIMESTAMP NOT NULL);
CREATE TABLE blocks (block_id INTEGER PRIMARY KEY, start BIGINT NOT NULL, length INTEGER NOT NULL);
CREATE TABLE bits (
    model_idx INTEGER NOT NULL, block_id INTEGER NOT NULL, correct BLOB NOT NULL, known BLOB);
CREATE TABLE extras (
    model_idx INTEGER NOT NULL, block_id INTEGER NOT NULL,
    confidence DOUBLE[], predicted INTEGER[], true_prob DOUBLE[]);
CREATE TABLE log (
    log_id INTEGER PRIMARY KEY, added_at TIMESTAMP NOT NULL, action VARCHAR NOT NULL,
    source VARCHAR NOT NULL, new_models INTEGER NOT NULL, new_samples INTEGER NOT NULL,
    entries BIGINT NOT NULL, checksum VARCHAR NOT NULL);
-- Each (model, block) row is turned into lists once and the lists are unnested side by
-- side: a lateral join per sample would copy the row's blob and lists for every sample.
CREATE VIEW predictions AS
    WITH packed AS (
        SELECT b.model_idx, k.start, k.length, b.correct::BIT AS cb, b.known::BIT AS kb,
               e.confidence AS cl, e.predicted AS pl, e.true_prob AS tl
        FROM bits b JOIN blocks k USING (block_id) LEFT JOIN extras e USING (model_idx, block_id)
    ), cells AS (
        SELECT model_idx, start,
               unnest(range(length)) AS j,
               unnest(list_transform(range(length), lambda j: get_bit(cb, (8 * (j // 8) + 7 - j % 8)::INTEGER))) AS correct,
               unnest(CASE WHEN kb IS NULL THEN NULL
                           ELSE list_transform(range(length), lambda j: get_bit(kb, (8 * (j // 8) + 7 - j % 8)::INTEGER)) END) AS known,
               unnest(cl) AS confidence, unnest(pl) AS predicted, unnest(tl) AS true_prob
        FROM packed
    )
    SELECT m.model_id AS model, s.sample_id AS sample, c.model_idx, s.sample_idx, c.correct::UTINYINT AS correct,
           c.confidence, c.predicted, c.true_prob, s.label, s.dataset, s.domain, d.category, s.split
    FROM cells c
    JOIN samples s ON s.sample_idx = c.start + c.j
    JOIN models m ON m.model_idx = c.model_idx
    JOIN domains d ON d.dataset = s.dataset AND d.domain = s.domain
    WHERE c.known IS NULL OR c.known = 1;
"""
