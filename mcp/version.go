package mcp

import "runtime/debug"

// modulePath is this module's path, under which a program's build
// information records the version it was built with.
const modulePath = "github.com/unfold-dev/unfold"

// moduleVersion returns the version of this module the running program was
// built with: the main module's when the program is unfold's own (a
// pseudo-version for a build in a checkout), the dependency's when a
// program imports it; "devel" when the build information has none (go run,
// tests).
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionIn(info)
}

// versionIn finds this module's version in info.
func versionIn(info *debug.BuildInfo) string {
	mod := &info.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range info.Deps {
			if d.Path == modulePath {
				mod = d
				if d.Replace != nil {
					mod = d.Replace
				}
				break
			}
		}
	}
	if mod == nil || mod.Version == "" || mod.Version == "(devel)" {
		return "devel"
	}
	return mod.Version
}
