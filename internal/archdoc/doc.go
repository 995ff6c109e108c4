// Package archdoc holds only a test: it keeps docs/architecture.md true.
// The package map there must name every package of the module and nothing
// else, and the layering it states must hold (go list, non-test imports).
package archdoc
