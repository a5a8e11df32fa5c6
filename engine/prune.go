package engine

import "fmt"

// A pruner (issue 32's finished-and-failed) is a rescuer whose write fails the message instead
// of releasing it: Solid Queue's supervisor prunes a process whose heartbeat lapsed and fails
// the executions it had claimed. Its read and its guard are the rescuer's; its UPDATE parks
// the row as DeadLettered with LastError PruneError. Unguarded it names the row by Id alone, so
// a message its worker finished between the read and the write ends finished and failed.

// PruneError is the LastError a pruner writes on the messages it fails.
const PruneError = "pruned: its process's heartbeat had lapsed"

// pruneText is the timeline's line of one prune, by its outcome.
func pruneText(outcome, name string, e Expired) string {
	switch outcome {
	case "rescued-finished":
		return fmt.Sprintf("%s failed %s with UPDATE … WHERE Id = %d alone: 1 row, but %s had finished it since the sweep read it: the message is finished and failed (DeadLettered)",
			name, e.IdempotencyKey, e.ID, e.LockedBy)
	case "rescued":
		return fmt.Sprintf("%s failed %s (%s's lease v%d had lapsed): DeadLettered, %q", name, e.IdempotencyKey, e.LockedBy, e.LeaseVersion, PruneError)
	}
	return fmt.Sprintf("%s's guarded prune of %s changed 0 rows: it is no longer Processing under %s lease v%d with the lease ended; its one finalization stands",
		name, e.IdempotencyKey, e.LockedBy, e.LeaseVersion)
}

// rescuesWord is what no-undone-finish's detail calls the sweeper's writes.
func rescuesWord(fails bool) string {
	if fails {
		return "prunes"
	}
	return "rescues"
}

// undoneFinishNames are no-undone-finish's name and short name: a rescuer's, or a pruner's.
func undoneFinishNames(fails bool) (name, short string) {
	if fails {
		return "no prune failed a finished message", "no prune failed a finished message"
	}
	return "no rescue set a finished message back to Pending", "no rescue undid a finished message"
}
