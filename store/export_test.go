package store

// KnownSchema is the schema of a version leaselab recognises, as schemaOf builds it.
func KnownSchema(version int) string { return knownSchemas[version] }

// DueBlockerSQL is the read of why a due claim found nothing, for its plan test.
const DueBlockerSQL = dueBlockerSQL
