package compat

import "testing"

func TestLastCommandOn(t *testing.T) {
	aof := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nt\r\n$4\r\nPXAT\r\n$13\r\n1796000000000\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
	if got := lastCommandOn(aof, "k"); got != "DEL k" {
		t.Fatalf("lastCommandOn = %q, want DEL k", got)
	}
	if got := lastCommandOn(aof, "other"); got != "" {
		t.Fatalf("lastCommandOn(other) = %q", got)
	}
}
