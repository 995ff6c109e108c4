package npm_test

// server.json is a valid MCP registry card for the npm package, and
// `make release` rewrites the release version in it and in
// docs/mcp-hosts.md, touching nothing else.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mcpHostsFixture stands in for docs/mcp-hosts.md: the version mentions a
// release rewrites, and look-alikes it must leave alone.
const mcpHostsFixture = `# MCP hosts
Version: 0.1.0
> Version: 0.1 · Updated: 2026-09-21

{ "command": "npx", "args": ["-y", "slivingdoc@0.1.0", "serve"], "version": "1.0.0" }
curl -LO https://github.com/slivingdoc/slivingdoc/releases/download/v0.1.0/slivingdoc-v0.1.0-linux-amd64
npx -y other-tool@0.1.0
`

func versionFileFixtures() map[string]string {
	card, err := os.ReadFile(filepath.Join(repoRoot, "server.json"))
	if err != nil {
		card = []byte(err.Error()) // TestServerJSON reports it
	}
	return map[string]string{"server.json": string(card), "mcp-hosts.md": mcpHostsFixture}
}

// serverCard is the part of the registry's server.json schema we rely on.
type serverCard struct {
	Schema      string `json:"$schema"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	Repository  struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	} `json:"repository"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
		Version      string `json:"version"`
		Transport    struct {
			Type string `json:"type"`
		} `json:"transport"`
		PackageArguments []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"packageArguments"`
	} `json:"packages"`
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func TestServerJSON(t *testing.T) {
	var card serverCard
	data, err := os.ReadFile(filepath.Join(repoRoot, "server.json"))
	if err == nil {
		err = json.Unmarshal(data, &card)
	}
	if err != nil {
		t.Fatal(err)
	}
	var launcher struct {
		MCPName string `json:"mcpName"`
	}
	data, err = os.ReadFile(filepath.Join(repoRoot, "npm", "slivingdoc", "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &launcher)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The registry proves npm ownership by the package's mcpName.
	if card.Name != launcher.MCPName || card.Name != "io.github.slivingdoc/slivingdoc" {
		t.Errorf("card name %q, launcher mcpName %q", card.Name, launcher.MCPName)
	}
	if !strings.HasPrefix(card.Schema, "https://static.modelcontextprotocol.io/schemas/") || card.Repository.Source != "github" {
		t.Errorf("schema %q, repository %+v", card.Schema, card.Repository)
	}
	if n := len(card.Description); n == 0 || n > 100 {
		t.Errorf("description is %d bytes; the registry takes 1..100", n)
	}
	if !semver.MatchString(card.Version) {
		t.Errorf("version %q is not semver", card.Version)
	}
	if len(card.Packages) != 1 {
		t.Fatalf("%d packages, want the npm one", len(card.Packages))
	}
	p := card.Packages[0]
	if p.RegistryType != "npm" || p.Identifier != "slivingdoc" || p.Version != card.Version || p.Transport.Type != "stdio" {
		t.Errorf("package %+v, want npm slivingdoc@%s over stdio", p, card.Version)
	}
	if len(p.PackageArguments) != 1 || p.PackageArguments[0].Value != "serve" {
		t.Errorf("package arguments %+v, want the one positional `serve`", p.PackageArguments)
	}
}

func TestReleaseRewritesVersions(t *testing.T) {
	if *releaseDirFlag != "" {
		t.Skip("checks the test's own release, not -release-dir")
	}
	r := theRelease(t)
	for path, v := range r.versionFiles {
		before, after := v[0], v[1]
		var want string
		switch filepath.Base(path) {
		case "server.json":
			old := regexp.MustCompile(`("version": ")[^"]*"`).FindAllString(before, -1)
			if len(old) != 2 {
				t.Fatalf("server.json has %d version fields, want the card's and the package's", len(old))
			}
			want = regexp.MustCompile(`(?m)^(\s*"version": ")[^"]*"`).ReplaceAllString(before, `${1}`+testVersion+`"`)
		case "mcp-hosts.md":
			want = strings.NewReplacer(
				"Version: 0.1.0", "Version: "+testVersion,
				"slivingdoc@0.1.0", "slivingdoc@"+testVersion,
				"download/v0.1.0/slivingdoc-v0.1.0-", "download/v"+testVersion+"/slivingdoc-v"+testVersion+"-",
			).Replace(before)
		}
		if after != want {
			t.Errorf("%s after make release:\n%s\nwant:\n%s", filepath.Base(path), after, want)
		}
	}
}
