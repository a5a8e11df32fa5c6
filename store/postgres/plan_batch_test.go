package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/store/postgres"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

// explainGeneric returns the generic plan of query, one line per node, on db's schema: the plan
// a worker's cached statement runs from its sixth call on. args are the parameters, written as
// SQL literals (EXECUTE's arguments take no parameters of their own).
func explainGeneric(t *testing.T, db *postgres.DB, query, args string) string {
	t.Helper()
	ctx := context.Background()
	conn := rawConn(t, db)
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prepare(ctx, "plan_probe", query); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "EXPLAIN (COSTS OFF) EXECUTE plan_probe("+args+")", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	return planText(t, rows)
}

// planText reads an EXPLAIN's rows: one line per node, trimmed.
func planText(t *testing.T, rows pgx.Rows) string {
	t.Helper()
	plan := storetest.Column[string](t, rows)
	for i, line := range plan {
		plan[i] = strings.TrimSpace(line)
	}
	return strings.Join(plan, "\n")
}

// The batch's statements find their rows through indexes: no statement of a batch reads the
// whole table. The batch claim's UPDATE looks its rows up by Id (= ANY of the picked Ids): joined
// to the pick, it was planned, depending on the table's statistics, as a hash join over a
// sequential scan (1 ms a batch at 2,000 rows).
func TestBatchPlansUseIndexes(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	if err := db.SeedBulk(ctx, 2000, t0); err != nil {
		t.Fatal(err)
	}
	claim := explainGeneric(t, db, postgres.ClaimBatchSQL(16), "'2026-01-01', 'Worker-A', '2026-01-02'")
	if strings.Contains(claim, "Seq Scan") || !strings.Contains(claim, "Index Scan using outboxmessages_claimable") ||
		!strings.Contains(claim, "Index Scan using outboxmessages_pkey on outboxmessages o") || !strings.Contains(claim, "Index Cond: (id = ANY") {
		t.Errorf("batch claim plan:\n%s\nwant the claim index for the pick, the primary key (id = ANY) for the UPDATE, no Seq Scan", claim)
	}
	keys := make([]string, 16)
	for i := range keys {
		keys[i] = engine.MessageKey(i + 1)
	}
	fin := explainGeneric(t, db, postgres.FinalizeManySQL, fmt.Sprintf(
		"'{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', '{%s}', '{}', '{}', '{}', '{}', '{}', '{}'", strings.Join(keys, ",")))
	if strings.Contains(fin, "Seq Scan") {
		t.Errorf("batch finalize plan:\n%s\nwant no Seq Scan", fin)
	}
}
