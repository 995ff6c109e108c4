// Package npm holds slivingdoc's distribution: the npm launcher package
// (slivingdoc/), the per-platform package template (platform/), the packer
// (pack.js), and the tests that prove a release works as a user gets it. It
// has no Go API.
//
// Data flow of a release (Makefile targets `release` and `npm-pack`):
//
//	make release VERSION=x.y.z
//	  go build (CGO_ENABLED=0, -trimpath, -X main.version=x.y.z) per PLATFORMS
//	    -> dist/slivingdoc-vx.y.z-<os>-<arch>[.exe]
//	  -> dist/SHA256SUMS (sorted by name, "<hex>  <name>", LF)
//	  -> version rewritten in server.json and docs/mcp-hosts.md
//	  -> go test -run TestReleaseBinaries: format, arch, no dynamic loader
//	make npm-pack VERSION=x.y.z
//	  node npm/pack.js -> dist/npm/slivingdoc-x.y.z.tgz (launcher + SHA256SUMS)
//	                      dist/npm/slivingdoc-<platform>-x.y.z.tgz (one binary each)
//
// At run time `npx slivingdoc serve` starts bin/slivingdoc.js, which picks
// @slivingdoc/<platform> (an optional dependency npm installs only where its
// os/cpu fit), checks the binary's SHA-256 against the SHA256SUMS it ships,
// and spawns it with stdio inherited, passing exit status and signals
// through. No step needs the network once the packages are installed.
//
// The tests build only the host's binary (into a temporary DIST through the
// same Makefile targets), install the tarballs into a temporary npm project
// with the registry unreachable, and drive the launcher from outside:
// version, MCP initialize + tools/list, exit codes, signals, byte-exact
// stdio, and refusal of a binary whose checksum does not match.
package npm
