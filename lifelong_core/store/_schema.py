"""DDL of the store (format version 1). See the package docstring for the layout."""

FORMAT_VERSION = "1"

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
CREATE VIEW predictions AS
    SELECT m.model_id AS model, s.sample_id AS sample, b.model_idx, s.sample_idx,
           get_bit(b.correct::BIT, (8 * (j // 8) + 7 - j % 8)::INTEGER)::UTINYINT AS correct,
           e.confidence[r.j + 1] AS confidence, e.predicted[r.j + 1] AS predicted,
           e.true_prob[r.j + 1] AS true_prob,
           s.label, s.dataset, s.domain, d.category, s.split
    FROM bits b
    JOIN blocks k USING (block_id)
    CROSS JOIN LATERAL (SELECT unnest(range(k.length)) AS j) r
    JOIN samples s ON s.sample_idx = k.start + r.j
    JOIN models m ON m.model_idx = b.model_idx
    JOIN domains d ON d.dataset = s.dataset AND d.domain = s.domain
    LEFT JOIN extras e ON e.model_idx = b.model_idx AND e.block_id = b.block_id
    WHERE b.known IS NULL OR get_bit(b.known::BIT, (8 * (j // 8) + 7 - j % 8)::INTEGER) = 1;
"""
