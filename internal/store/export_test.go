package store

// MaxIDTries exposes the retry bound of InsertUnique to the external tests.
const MaxIDTries = maxIDTries
