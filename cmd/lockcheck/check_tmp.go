package main

import (
	"context"
	"io"
)

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int { return 2 }
