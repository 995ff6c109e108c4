package main

import (
	"strings"

	"github.com/slivingdoc/slivingdoc/bench"
)

// s3Dollars is what the proxy's counted requests would cost at S3
// Standard request prices (bench.S3RequestDollars): a class names the
// request's method first ("PUT if-match current", "GET packs/increments",
// "LIST"), which decides its price.
func s3Dollars(reqs []OpCount) float64 {
	var d float64
	for _, c := range reqs {
		method, _, _ := strings.Cut(c.Class, " ")
		d += float64(c.Requests) * bench.S3RequestDollars(method)
	}
	return d
}

// s3PerMillion is s3Dollars per million accepted commits (or operations).
func s3PerMillion(reqs []OpCount, accepted int) float64 {
	return bench.S3DollarsPerMillion(s3Dollars(reqs), accepted)
}
