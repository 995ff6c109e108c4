'use strict';

// The release matrix, shared by the launcher and npm/pack.js: one entry per
// published binary. `node` is Node's `${process.platform}-${process.arch}`,
// which also names the npm package @slivingdoc/<node> (its `os` and `cpu`
// fields let npm skip the packages that do not fit the host). `go` is the
// platform in the Makefile's PLATFORMS notation (os/arch[/goarm]); `asset`
// is the os-arch part of the release file slivingdoc-v<version>-<asset>[.exe].

const platforms = [
  { node: 'linux-x64', os: 'linux', cpu: 'x64', go: 'linux/amd64', asset: 'linux-amd64', exe: '' },
  { node: 'linux-arm64', os: 'linux', cpu: 'arm64', go: 'linux/arm64', asset: 'linux-arm64', exe: '' },
  // GOARM=7: refuse older ARM cores up front instead of dying on SIGILL.
  { node: 'linux-arm', os: 'linux', cpu: 'arm', go: 'linux/arm/7', asset: 'linux-armv7', exe: '', armVersion: 7 },
  { node: 'darwin-x64', os: 'darwin', cpu: 'x64', go: 'darwin/amd64', asset: 'darwin-amd64', exe: '' },
  { node: 'darwin-arm64', os: 'darwin', cpu: 'arm64', go: 'darwin/arm64', asset: 'darwin-arm64', exe: '' },
  { node: 'win32-x64', os: 'win32', cpu: 'x64', go: 'windows/amd64', asset: 'windows-amd64', exe: '.exe' },
];

const scope = '@slivingdoc';

/** The npm package holding the binary for entry p. */
function packageName(p) {
  return `${scope}/${p.node}`;
}

/** The release file name of entry p's binary, as listed in SHA256SUMS. */
function assetName(p, version) {
  return `slivingdoc-v${version}-${p.asset}${p.exe}`;
}

/** Where the binary sits inside its platform package. */
function binaryPath(p) {
  return `bin/slivingdoc${p.exe}`;
}

module.exports = { platforms, packageName, assetName, binaryPath };
