package main

import (
	"strings"
	"testing"
)

// The glide-close flags are refused when they name no way or no client,
// before anything starts.
func TestCheckRefusesGlideFlags(t *testing.T) {
	ok := func() config {
		return config{runs: 1, seeds: 1, clients: 1, benchN: 1, checkerKeys: 1, checkOps: 1, tpDuration: 1, memDuration: 1, porcTimeout: 1, raceDuration: 1,
			glideClients: 16, glideWays: "killed,restarted,none"}
	}
	if c := ok(); c.check() != nil {
		err := c.check()
		t.Fatalf("the defaults refused: %v", err)
	}
	for _, tc := range []struct {
		edit func(*config)
		want string
	}{
		{func(c *config) { c.glideWays = "killed,bogus" }, `no way "bogus"`},
		{func(c *config) { c.glideClients = 0 }, "-glide-clients 0"},
		{func(c *config) { c.glideClients = 201 }, "-glide-clients 201"},
	} {
		c := ok()
		tc.edit(&c)
		if err := c.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check: %v; want an error saying %q", err, tc.want)
		}
	}
}

// glide-close runs only when named: its hung cores would share the
// machine with every section after it.
func TestGlideCloseOnlyWhenNamed(t *testing.T) {
	if (&config{}).wants("glide-close") {
		t.Error("a default run wants glide-close")
	}
	if !(&config{}).wants("memory") || !(&config{only: "glide-close"}).wants("glide-close") {
		t.Error("a default run does not want memory, or -only glide-close does not want glide-close")
	}
}
