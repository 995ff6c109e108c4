//go:build race

package remote

// raceDetector: the tests run under -race (make race), where pure
// computation is about ten times slower; the exhaustive ones check a
// smaller scope there (make test runs the whole one).
const raceDetector = true
