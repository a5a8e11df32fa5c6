package postgres

// OlderSchemaSQL and SchemaMark let the external tests build an older leaselab's schema.
var (
	OlderSchemaSQL   = olderSchemaSQL
	OlderSchemaSQLOf = olderSchemaSQLOf
	OlderSchemas     = len(olderSchemas)
	SchemaMark       = schemaMark
)
