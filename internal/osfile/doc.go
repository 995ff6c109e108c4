// Package osfile holds the file-system primitives that several packages
// must get exactly right, written once:
//
//	Acquire / TryAcquire   an exclusive lock on a lock file, between
//	                       processes and between two opens in one process
//	                       (flock on unix, LockFileEx on windows: both belong
//	                       to the open file and are dropped by the kernel
//	                       when the holder dies, so a crash never wedges the
//	                       next caller). Platforms with neither refuse with
//	                       an error matching errors.ErrUnsupported.
//	SyncDir                fsync of a directory, so the entries renamed into
//	                       it survive a crash (a no-op on windows, where NTFS
//	                       journals the rename and a directory cannot be
//	                       opened for flushing).
//	WriteFile              atomic replacement: the bytes go to a temporary
//	                       file in the target's directory that is renamed
//	                       over the target, so every reader sees the old or
//	                       the new content, never a mix; durable adds the
//	                       fsyncs (file, then directory) that make an
//	                       acknowledged write survive a crash.
//	Overwrite              a small record rewritten in place when its length
//	                       is unchanged (else WriteFile, not durable): no
//	                       inode created or freed, at the price of torn
//	                       reads and crash leftovers its readers must detect.
//	WriteSpare, Exchange   atomic replacement as WriteFile, through a spare
//	                       file exchanged with the target (renameat2
//	                       RENAME_EXCHANGE), so the next write reuses the old
//	                       inode: no inode created or freed, for files whose
//	                       readers all hold one lock.
//	WriteOver              a file no reader reads yet (a spare, a file
//	                       prepared ahead) written over in place and cut to
//	                       length: its blocks reused, not freed and
//	                       allocated again as a truncation to zero does.
//	ReadDirUnsorted        a directory's entries in the file system's
//	                       order: a listing that sorts its own results (or
//	                       needs none) does not pay os.ReadDir's sort.
//
// Users: remote/filestore (its store lock and directory syncs), server
// (the per-directory lock and its private state files), cas (its pack
// cache) and internal/seaweed (the build lock).
package osfile
