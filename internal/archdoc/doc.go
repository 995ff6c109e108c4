// Package archdoc holds only a test: it keeps docs/architecture.md true.
// The package map there must name every package of the module and nothing
// else, and the layering it states must hold (go list, non-test imports).
// It also keeps the repository's documents self-contained: every relative
// markdown link and every docs/ page named in code resolves, and no
// document cites a file that lives outside the repository.
package archdoc
