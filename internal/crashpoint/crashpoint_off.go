//go:build !failpoints

package crashpoint

// Enabled reports whether this build records crash points.
const Enabled = false

// Hit marks the instant before a durable side effect; in a normal build
// it does nothing.
func Hit(label, detail string) {}
