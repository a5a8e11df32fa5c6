package postgres

// A schema is leaselab's when it holds, object by object and column by column, what schema.sql
// builds and nothing else: the comment leaselab leaves on it proves nothing, since anyone can
// write it, and a table, trigger or function added beside leaselab's would run (or lose its
// rows) on leaselab's writes. The reference is schema.sql itself, built in the transaction's
// temporary schema inside a savepoint that is rolled back, and read with the same query.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"leaselab/store/internal/shared"

	"github.com/jackc/pgx/v5"
)

// fact is one thing a schema holds: key names it ("column outboxmessages.lockedby"), value says
// what it is.
type fact struct{ key, value string }

// factsSQL lists every object of the namespace $1 as (key, value): relations of every kind
// (tables, indexes, sequences, views, composite types), their columns, constraints, indexes,
// triggers (but the internal ones of foreign keys), rules and policies; functions and
// procedures; types and domains; every other kind of object a schema can hold; and tables
// anywhere that inherit from one of its tables (TRUNCATE would empty them too). A table's fillfactor is
// left out: it tunes the pages, not what they hold (schema.sql's moved from 80 to 30 in issue 22,
// and a schema made with 80 is still this leaselab's).
const factsSQL = `
SELECT CASE c.relkind WHEN 'r' THEN 'table ' WHEN 'p' THEN 'partitioned table ' WHEN 'i' THEN 'index ' WHEN 'I' THEN 'index '
         WHEN 'S' THEN 'sequence ' WHEN 'v' THEN 'view ' WHEN 'm' THEN 'materialized view ' WHEN 'c' THEN 'type '
         WHEN 'f' THEN 'foreign table ' ELSE 'relation ' END || c.relname,
       'options=' || coalesce(array_to_string(array(SELECT o FROM unnest(c.reloptions) o WHERE o NOT LIKE 'fillfactor=%'), ','), '')
       || ' rls=' || c.relrowsecurity::text
  FROM pg_class c WHERE c.relnamespace = $1
UNION ALL
SELECT 'column ' || c.relname || '.' || a.attname,
       format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull::text || ' identity=' || a.attidentity::text
       || ' generated=' || a.attgenerated::text || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' position=' || a.attnum
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relnamespace = $1 AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind <> 'i'
UNION ALL
SELECT 'constraint ' || co.conname, co.contype::text || ' ' || pg_get_constraintdef(co.oid)
  FROM pg_constraint co WHERE co.connamespace = $1
UNION ALL
SELECT 'the definition of index ' || ic.relname, pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE ic.relnamespace = $1
UNION ALL
SELECT 'trigger ' || t.tgname || ' on ' || c.relname, pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = $1 AND NOT t.tgisinternal
UNION ALL
SELECT 'rule ' || r.rulename || ' on ' || c.relname, pg_get_ruledef(r.oid)
  FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = $1 AND r.rulename <> '_RETURN'
UNION ALL
SELECT 'policy ' || p.polname || ' on ' || c.relname, p.polcmd::text
  FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = $1
UNION ALL
SELECT 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', p.prokind::text
  FROM pg_proc p WHERE p.pronamespace = $1
UNION ALL
SELECT 'type ' || t.typname, t.typtype::text
  FROM pg_type t WHERE t.typnamespace = $1 AND t.typrelid = 0
   AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.typarray = t.oid)
UNION ALL
SELECT kind || ' ' || name, '' FROM (
        SELECT 'collation' AS kind, collname::text AS name FROM pg_collation WHERE collnamespace = $1
  UNION ALL SELECT 'conversion', conname::text FROM pg_conversion WHERE connamespace = $1
  UNION ALL SELECT 'operator', oprname::text FROM pg_operator WHERE oprnamespace = $1
  UNION ALL SELECT 'operator class', opcname::text FROM pg_opclass WHERE opcnamespace = $1
  UNION ALL SELECT 'operator family', opfname::text FROM pg_opfamily WHERE opfnamespace = $1
  UNION ALL SELECT 'statistics object', stxname::text FROM pg_statistic_ext WHERE stxnamespace = $1
  UNION ALL SELECT 'text search configuration', cfgname::text FROM pg_ts_config WHERE cfgnamespace = $1
  UNION ALL SELECT 'text search dictionary', dictname::text FROM pg_ts_dict WHERE dictnamespace = $1
  UNION ALL SELECT 'text search parser', prsname::text FROM pg_ts_parser WHERE prsnamespace = $1
  UNION ALL SELECT 'text search template', tmplname::text FROM pg_ts_template WHERE tmplnamespace = $1
  UNION ALL SELECT 'extension', extname::text FROM pg_extension WHERE extnamespace = $1
) other
UNION ALL
SELECT 'table ' || cn.nspname || '.' || ch.relname || ' that inherits from ' || pa.relname, ''
  FROM pg_inherits h JOIN pg_class ch ON ch.oid = h.inhrelid JOIN pg_namespace cn ON cn.oid = ch.relnamespace
  JOIN pg_class pa ON pa.oid = h.inhparent
 WHERE pa.relnamespace = $1 OR ch.relnamespace = $1
ORDER BY 1`

// readFacts reads what the namespace nsOID holds, with its own name (and pg_temp) taken out of
// the definitions, so that two schemas built by the same statements read the same.
func readFacts(ctx context.Context, tx pgx.Tx, nsOID uint32, nsName string) ([]fact, error) {
	rows, err := tx.Query(ctx, factsSQL, nsOID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var facts []fact
	for rows.Next() {
		var f fact
		if err := rows.Scan(&f.key, &f.value); err != nil {
			return nil, err
		}
		for _, prefix := range []string{nsName + ".", "pg_temp."} {
			f.value = strings.ReplaceAll(f.value, prefix, "")
		}
		facts = append(facts, f)
	}
	return facts, rows.Err()
}

// schemaFacts reads what schema holds (nothing when it does not exist).
func schemaFacts(ctx context.Context, tx pgx.Tx, schema string) ([]fact, error) {
	var oid uint32
	err := tx.QueryRow(ctx, `SELECT oid FROM pg_namespace WHERE nspname = $1`, schema).Scan(&oid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", schema, err)
	}
	facts, err := readFacts(ctx, tx, oid, schema)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", schema, err)
	}
	return facts, nil
}

// referenceFacts builds schema.sql in tx's temporary schema, reads it and rolls it back: what a
// schema leaselab made holds. Nothing of it outlives the call.
func referenceFacts(ctx context.Context, tx pgx.Tx) (facts []fact, err error) {
	return referenceFactsOf(ctx, tx, schemaSQL)
}

// referenceFactsOf is referenceFacts for the schema text def (schemaSQL, or an older
// leaselab's).
func referenceFactsOf(ctx context.Context, tx pgx.Tx, def string) (facts []fact, err error) {
	if _, err := tx.Exec(ctx, "SAVEPOINT leaselab_reference"); err != nil {
		return nil, fmt.Errorf("build leaselab's schema to compare: %w", err)
	}
	defer func() {
		if _, rerr := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT leaselab_reference"); rerr != nil && err == nil {
			err = fmt.Errorf("build leaselab's schema to compare: %w", rerr)
		}
	}()
	if _, err := tx.Exec(ctx, "SET LOCAL search_path = pg_temp"); err != nil {
		return nil, fmt.Errorf("build leaselab's schema to compare: %w", err)
	}
	if _, err := tx.Exec(ctx, def); err != nil {
		return nil, fmt.Errorf("build leaselab's schema to compare: %w", err)
	}
	var oid uint32
	var name string
	if err := tx.QueryRow(ctx, `SELECT oid, nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()`).Scan(&oid, &name); err != nil {
		return nil, fmt.Errorf("build leaselab's schema to compare: %w", err)
	}
	facts, err = readFacts(ctx, tx, oid, name)
	if err != nil {
		return nil, fmt.Errorf("build leaselab's schema to compare: %w", err)
	}
	return facts, nil
}

// checkContents returns nil when got, what schema holds, is exactly what schema.sql builds, and
// otherwise ErrNotOurs with the first difference in words.
func checkContents(ctx context.Context, tx pgx.Tx, schema string, got []fact) error {
	want, err := referenceFacts(ctx, tx)
	if err != nil {
		return err
	}
	if diff := firstDifference(want, got); diff != "" {
		if older, err := isOlderSchema(ctx, tx, got); err != nil || older != "" {
			return errors.Join(err, olderSchemaError(schema, older))
		}
		return fmt.Errorf("schema %s: %w: %s; leaselab changes only schemas it made: choose another schema; nothing was changed", schema, ErrNotOurs, diff)
	}
	return nil
}

// firstDifference says in words the first way got differs from want, or "" when it does not:
// an object leaselab does not make comes first, since it says most.
func firstDifference(want, got []fact) string {
	kv := func(f fact) (string, string) { return f.key, f.value }
	w, g := shared.Index(want, kv), shared.Index(got, kv)
	// An object of its own says more than a column or a constraint of it.
	part := func(key string) bool {
		return strings.HasPrefix(key, "column ") || strings.HasPrefix(key, "constraint ") || strings.HasPrefix(key, "the definition")
	}
	var extra []string
	for _, f := range got {
		if _, ok := w[f.key]; !ok {
			extra = append(extra, f.key)
		}
	}
	slices.SortStableFunc(extra, func(a, b string) int {
		switch {
		case part(a) == part(b):
			return 0
		case part(a):
			return 1
		}
		return -1
	})
	if len(extra) > 0 {
		article := "a "
		if strings.ContainsRune("aeiou", rune(extra[0][0])) {
			article = "an "
		}
		return "it holds " + article + extra[0] + ", which leaselab does not create"
	}
	keys := make([]string, 0, len(want))
	for _, f := range want {
		keys = append(keys, f.key)
	}
	slices.Sort(keys)
	for _, k := range keys {
		gv, ok := g[k]
		switch {
		case !ok:
			return "it has no " + k
		case gv != w[k]:
			return fmt.Sprintf("its %s is %q, leaselab's is %q", k, gv, w[k])
		}
	}
	return ""
}
