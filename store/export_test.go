package store

// KnownSchema is the schema of a version leaselab recognises, as schemaOf builds it.
func KnownSchema(version int) string { return knownSchemas[version] }
