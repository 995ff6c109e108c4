package bench

import "strings"

// S3 Standard request prices (US East), in dollars per 1,000 requests:
// what the fleet simulation (bench/fleetsim) and the load generator
// (bench/loadgen) price a commit's requests at, so a design is judged by
// what a fleet would pay as well as by how many requests it makes.
// Storage and transfer are left out: they follow the bytes, which the
// reports give on their own.
const (
	S3WritePer1000 = 0.005  // PUT, COPY, POST, LIST: a conditional write or create is a PUT
	S3ReadPer1000  = 0.0004 // GET, HEAD and every other request but DELETE
)

// S3RequestDollars is what S3 Standard charges for one request of the
// HTTP method ("LIST" for a listing, which is a GET on the wire): DELETE
// is free.
func S3RequestDollars(method string) float64 {
	switch strings.ToUpper(method) {
	case "PUT", "COPY", "POST", "LIST":
		return S3WritePer1000 / 1000
	case "DELETE":
		return 0
	default:
		return S3ReadPer1000 / 1000
	}
}

// S3DollarsPerMillion scales the request cost of a run that accepted
// commits to a million accepted commits (0 when none was accepted).
func S3DollarsPerMillion(dollars float64, commits int) float64 {
	if commits <= 0 {
		return 0
	}
	return dollars / float64(commits) * 1e6
}
