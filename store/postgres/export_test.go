package postgres

// FinalizeManySQL is the batch finalize's statement, for the plan test.
const FinalizeManySQL = finalizeManySQL
