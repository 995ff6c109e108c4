// Package seaweed gives the tests of any package (and the benchmark tools) a
// real S3-compatible server: SeaweedFS, built from its Go module on first
// use and run on loopback. It is internal: a test harness (it takes a
// testing.TB), not API.
//
// Data flow:
//
//	Binary()      the cached weed executable. The first caller in any process
//	              builds it: `go mod download` the pinned module version, copy
//	              the module into a temp folder (go install refuses its replace
//	              directives), `go build ./weed` there, then publish it by
//	              atomic rename under <user cache dir>/slivingdoc/test/
//	              seaweedfs-<version>/weed. A file lock serialises builds of
//	              parallel test binaries. SLIVINGDOC_WEED names a prebuilt
//	              binary instead. The go commands die with the process that
//	              started them (parent-death signal on Linux), and a build
//	              removes what a killed one left (the module copy under
//	              build-work/, .weed-<pid>.tmp); the Go build cache keeps
//	              what it had compiled, so the next build resumes.
//	Build(w)      the same for `make weed` (cmd/weedbuild), which make test
//	              runs first: steps and progress on w, the log in
//	              build.log next to the binary.
//	Start(tb)     one `weed server -filer -s3` process on 127.0.0.1 with free
//	              ports, a private data directory and static credentials from
//	              an s3 config file; it returns when a bucket round trip works
//	              and stops the server in tb.Cleanup.
//	Shared(tb)    the one Server of the whole test binary, started lazily; it
//	              dies with the test process (parent-death signal on Linux).
//	Server        Endpoint/Region/AccessKey/SecretKey, a default Bucket,
//	              NewBucket, Client, Env for child processes, and the fault
//	              controls Stop, Kill, Restart, Pause and Resume.
//
// A test that cannot get SeaweedFS fails with the reason (build log tail or
// server log tail); it never skips.
//
// Costs measured on 2 shared cores: a cold build takes minutes (about 40 s
// with a warm Go build cache), a start about 11 s and a restart about 17 s
// (SeaweedFS waits for its filer lock ring before it takes writes), a Kill
// is immediate and a graceful Stop about 1 s. Under contention SeaweedFS
// serialises writes of one key behind a lock it polls once a second, so
// losers of a conditional-write race may wait up to a second for their 412.
package seaweed
