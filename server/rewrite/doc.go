// Package rewrite is the rewrite of the visible directory L under the
// recovery flag, and the settling of one that was interrupted (L3 and L4
// of docs/local-state.md): the only code of the engine that writes L's
// files for a merge, a restore or a revert.
//
// Its map:
//   - Materialise (materialise.go) brings L and A to a planned change
//     (server/plan's changes, over server/dircall's Call) and records
//     the next baseline. With nothing to rewrite it only records the
//     baseline (skipped when A says the same already). Otherwise apply
//     (apply.go) records what settling needs, then removes and writes L's
//     files (server/workdir), and Materialise installs the next baseline,
//     clears the flag and removes the record. P's three files are
//     written through spares and given back to them (server/pstate's
//     rewrite.go), so once a directory has made one rewrite the next ones
//     create and free no file of P; the next baseline is known by the
//     checksum the record names (pstate.NextBaseline), never by a name. NextBaseline is the
//     baseline recording R after a merge, each path left with conflict
//     blocks keeping its current base (its content saved in P first).
//   - Interrupted (materialise.go) is how Materialise reports a failure
//     once L may have changed: it carries the flag and the stage, and the
//     caller turns it at once into RECOVERY_FAILURE after one
//     resynchronisation. A failure before L was touched is returned
//     mapped to the catalogue, as for any call.
//   - Settle (record.go) turns the rewrite record the recovery flag
//     names into one baseline, path by path from what L holds: "after"
//     takes the next baseline's base, "before" the recorded one, and a
//     path the caller edited since takes the base of the version its
//     content shows it was made from (whichVersion), or an unknown base
//     when none does (server/plan then never merges it). It records that
//     baseline, then removes the flag, the record and the rewrite's
//     temporary files.
//   - Just before apply changes L, Materialise arms the CLI's interrupt
//     handler (internal/interrupt): an interrupt from then on lets the
//     rewrite finish; a call that rewrites nothing never installs it.
//   - The failpoints (failpoint.go) name the instants a crash test kills
//     the process at: they do nothing unless the binary is built with
//     -tags failpoints (failpoint_on.go) and SLIVINGDOC_FAILPOINT names
//     one (with InterruptPrefix, the process sends itself SIGINT there
//     instead); SetFailHook turns them into errors for in-process tests.
//
// The invariant it owns: before L's first file changes, P holds durably
// the next baseline, the contents settling may need and find in no pack,
// the rewrite record and the recovery flag, in that order; the flag is
// cleared only after A is recorded. Settling is recorded before anything
// else happens and gives each path the base that explains what L holds,
// so a second crash at any point settles again from a recorded state,
// never from one kept in memory.
//
// It must not import server: the engine hands it the call
// (*dircall.Call) and acts on what it returns; nothing here climbs back.
package rewrite
