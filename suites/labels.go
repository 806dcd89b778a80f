// Package suites holds what the Ginkgo suites below it share: the labels a
// CI selects slices with, and the setup that obtains server images.
//
// Select with go test's Ginkgo flags, for example
//
//	go test ./suites/topology -ginkgo.label-filter='sentinel && valkey-9.1 && kill'
package suites

import (
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// Labels for node controls.
const (
	Kill      = "kill"
	Restart   = "restart"
	Pause     = "pause"
	Partition = "partition"
	Clock     = "clock"
	Health    = "health"
)

// BuildLabel is a build's label: its name, e.g. "valkey-9.1".
func BuildLabel(b topology.Build) string { return b.Name }

// KindLabel is a topology's label: its kind, e.g. "sentinel".
func KindLabel(k topology.Kind) string { return string(k) }

// CheckLabel is a compat check's label: Ginkgo labels may not hold "/",
// so "extend/held" becomes "extend.held".
func CheckLabel(name string) string { return strings.ReplaceAll(name, "/", ".") }

// Links labels the specs of the clients' links (the network faults'
// proxies).
const Links = "links"
