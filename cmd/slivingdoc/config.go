package main

// Contract for the shared store/engine flags (DESIGN §8), owned by the CLI
// (pull/commit/status/log) work; serve and verify use it too. The owner
// replaces the bodies; the signatures may grow but must not change.

import (
	"context"
	"flag"

	"github.com/slivingdoc/slivingdoc/server"
)

// settings holds the values of the shared flags of one command invocation.
type settings struct{}

// addSettingsFlags registers every DESIGN §8 flag on fs.
func addSettingsFlags(fs *flag.FlagSet) *settings { return &settings{} }

// engineConfig resolves flags > environment > defaults, opens the store
// and returns the engine configuration. Call it after fs.Parse.
func (s *settings) engineConfig(ctx context.Context) (server.Config, error) {
	panic("slivingdoc: engineConfig not implemented yet")
}
