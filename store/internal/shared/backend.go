package shared

import "leaselab/engine"

// Backend returns db as an engine.Backend, and a nil one (not a nil pointer in a non-nil
// interface) with an error: what both stores' makers of databases return.
func Backend[DB engine.Backend](db DB, err error) (engine.Backend, error) {
	if err != nil {
		return nil, err
	}
	return db, nil
}
