"""File readers and writers at the edge: one strict reader per kind of user file."""
