package main

// The black-box suite also runs against SeaweedFS (S3 over loopback): the
// binary selects it through the environment, as a user would.

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

func init() {
	backends = append(backends, backend{"seaweedfs", seaweedStoreEnv})
}

// seaweedStoreEnv gives each notebook a fresh bucket on the shared server.
func seaweedStoreEnv(t *testing.T) []string {
	srv := seaweed.Shared(t)
	env := append(srv.Env(), "SLIVINGDOC_BUCKET="+srv.NewBucket(t), "SLIVINGDOC_PATH_STYLE=true",
		// Keep the developer's own AWS profile out of the child processes.
		"AWS_CONFIG_FILE="+devNull, "AWS_SHARED_CREDENTIALS_FILE="+devNull)
	return env
}
