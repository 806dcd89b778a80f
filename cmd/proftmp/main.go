package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

func main() {
	ctx := context.Background()
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		panic(err)
	}
	b, _ := topology.Lookup("valkey-9.1")
	img := eng.Resolve(ctx, b, topology.Sources{})
	for _, k := range os.Args[1:] {
		begin := time.Now()
		t, err := topology.Start(ctx, eng, b, img.Ref, topology.Kind(k), topology.Options{})
		fmt.Fprintf(os.Stderr, "== %s %v err=%v\n", k, time.Since(begin).Round(time.Millisecond), err)
		if t != nil {
			t.Terminate(ctx)
		}
	}
}
