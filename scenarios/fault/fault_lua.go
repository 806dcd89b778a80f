package fault

import (
	"context"
	"fmt"
	"strings"
)

// UnloadLua takes the Lua engine away from every server, as a build made
// without Lua (Valkey 9's BUILD_LUA=no) has none: EVAL answers "Could not
// find scripting engine", EVALSHA NOSCRIPT. A library that releases or
// extends by script then cannot, for the rest of the run; one that
// acquires by script cannot take the lock at all. Valkey 9 links Lua as a
// module, which MODULE UNLOAD removes; the servers must allow the MODULE
// command from their start (ServerConfig). Where Lua is built in (Valkey
// 8, Redis) an EVAL still answers after the unload, and the window's
// unmet says so rather than the run passing for a Lua-less one. A node a
// later fault restarts comes back with Lua.
var UnloadLua Fault = unloadLua{faultBase{"unload-lua", anyKind, "MODULE UNLOAD lua on every server (Valkey 9 links Lua as a module), as a build without Lua: EVAL fails and EVALSHA answers NOSCRIPT for the rest of the run; where Lua is built in, the window's unmet says so"}}

type unloadLua struct{ faultBase }

// ServerConfig lets MODULE UNLOAD run: the setting is read only at start.
func (unloadLua) ServerConfig() []string { return []string{"enable-module-command yes"} }

func (f unloadLua) Inject(ctx context.Context, env Env) error {
	win, end := env.openWindow(f.name, nil, "MODULE UNLOAD lua on every server, for the rest of the run")
	defer end()
	var kept []string
	for _, n := range env.Topo.Servers() {
		_, err := n.Do(ctx, "MODULE", "UNLOAD", "lua")
		// A second step finds the module gone already: the EVAL below
		// tells that apart from a build with Lua built in.
		if err != nil && !strings.Contains(err.Error(), "no such module") {
			return fmt.Errorf("%s: MODULE UNLOAD lua on %s: %w", f.name, n.Name, err)
		}
		if _, err := n.Do(ctx, "EVAL", "return 1", "0"); err == nil {
			kept = append(kept, n.Name)
		}
	}
	if len(kept) > 0 {
		env.unmet(win, "Lua still answered EVAL on %s after MODULE UNLOAD lua: it is built into this server, not a module", strings.Join(kept, ", "))
	}
	return nil
}
