// Package workdir is the visible directory L of DESIGN §1 as the engine
// sees it: how L is listed and read (Scan), which of its names and
// contents are notebook files (the rules of DESIGN §6 and the ignore
// rules), and how its files are replaced (WriteFiles, RemoveFile). It
// knows nothing of baselines, stores, merges or the private state P; the
// engine (package server) keeps the stat cache in P and passes it in.
// Dependencies go one way: server imports workdir, never the reverse.
//
// Data flow:
//
//	L ─listDir (getdents64 + fstatat on Linux)─▶ entries with type and stat
//	  ─ignore rules, name rules, collisions────▶ dropped / refused / kept
//	  ─stat cache (Entry, trusted and same stat)▶ reused file ID, no read
//	  ─otherwise ReadChecked + cas.HashFile────▶ Listing.Files / Content / Chunks
//	    (Chunks: the chunk list of each chunked file read, which a commit
//	    puts into its pack without cutting it again: cas.WriteFileChunks)
//
// With a WatchedListings (a long-lived process), a directory that an
// inotify watch proves unchanged is not listed again: its remembered
// listing, and the outcome of its last walk, stand in (watched.go says
// why that is sound and what such a watch cannot see). When the watch
// says only that files in a directory were written (content-only events:
// no entry created, removed or renamed), its listing stands with those
// files stat-ed again, and only its outcome is found anew. Such a scan
// also starts Listing.Files from a copy of the last scan's (carried.go)
// and puts in only the files of the directories whose outcome is not the
// one those came from, so a commit that changed one file does not
// rebuild a map of every file; the map returned is always the caller's
// own, equal to a scan's from nothing. Nor does it visit every
// directory: a subtree whose directories were all recalled with their
// outcome by the last scan, and that no event has named since (settled,
// watched.go), is skipped whole when the name still denotes it (its
// parent's listing was recalled, whether or not files in the parent were
// written): its files are already in the carried map, and the ignored
// entries and marker files it adds are remembered with it. A scan visits
// only the directories on the path to a change and those whose state is
// unknown (an overflow, a new or failed watch, another cache or other
// rules), and its end-of-scan sweeps count a skipped subtree's
// directories as reached.
//
// Invariants (each relied on by the engine):
//   - Every entry of L a scan does not leave out is either in
//     Listing.Files or in Listing.Invalid, never both; ignored entries
//     are dropped before anything reads or compares them.
//   - A cached file ID is reused only when the entry is Trusted and size,
//     mtime, ctime, inode and device all equal the cached ones. An entry
//     is trusted only when its mtime was older than the start of the scan
//     that read it by the racy margin (50 ms; 2 s on whole-second time
//     stamps), and a file whose stat changed while it was read gets an
//     impossible mtime: an edit within the same timestamp tick as a read
//     is always noticed by the next scan.
//   - Files are opened through an os.Root, non-blocking, and checked to be
//     the regular file that was listed (same inode and device): a symlink
//     or FIFO raced in is refused, not followed or blocked on; a file
//     replaced between listing and read is ErrChangedDuringScan.
//   - Names are the portable subset (names.go): a valid name can be
//     created on Linux, macOS and Windows, and two valid siblings never
//     fold to the same name on a case-insensitive file system (both are
//     refused with FileNameCollision).
//   - A file is replaced only through a temporary sibling named TempPrefix,
//     16 lowercase hex digits and ".tmp", fsynced (or the file system
//     flushed once) before it is renamed over the target, and only if the
//     target still has the stat it had when scanned; otherwise
//     ErrChangedDuringScan, so a concurrent edit is never overwritten.
//     Directories are fsynced after the renames.
//   - Such temporary names are the engine's only while an interrupted
//     rewrite is pending (Rules.TempsOurs): then the scan sets them aside;
//     at any other time they are ordinary user files.
package workdir
