package historyjson_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/history/synth"
)

// BenchmarkRead reads a generated history of 100k operations in Save's
// layout and indented as jq writes it, with the Reader and with
// encoding/json's Decoder (Token for the structure, Decode for each
// operation), the alternative the Reader was measured against.
func BenchmarkRead(b *testing.B) {
	h := synth.Generate(1, 100_000, 10, 50)
	dir := b.TempDir()
	saved := filepath.Join(dir, "saved.json")
	if err := h.Save(saved); err != nil {
		b.Fatal(err)
	}
	indented := filepath.Join(dir, "indented.json")
	doc, _ := json.MarshalIndent(h, "", "  ")
	os.WriteFile(indented, doc, 0o644)
	for _, layout := range []struct{ name, path string }{{"saved", saved}, {"indented", indented}} {
		for _, reader := range []struct {
			name string
			read func(string) (int, error)
		}{{"Reader", readerCount}, {"Decoder", decoderCount}} {
			b.Run(layout.name+"/"+reader.name, func(b *testing.B) {
				fi, _ := os.Stat(layout.path)
				b.SetBytes(fi.Size())
				for b.Loop() {
					n, err := reader.read(layout.path)
					if err != nil || n != len(h.Ops) {
						b.Fatalf("%d operations, %v", n, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(h.Ops)), "ns/op-read")
			})
		}
	}
}

func readerCount(path string) (int, error) {
	n := 0
	_, err := historyjson.Scan(path, func(int, *history.Op) error { n++; return nil })
	return n, err
}

// decoderCount finds the operations' array with Token and decodes each
// operation with Decode.
func decoderCount(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	n := 0
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		if t != "ops" {
			continue
		}
		if t, err = dec.Token(); err != nil || t != json.Delim('[') {
			return n, errors.New("no array after \"ops\"")
		}
		for dec.More() {
			var op history.Op
			if err := dec.Decode(&op); err != nil {
				return n, err
			}
			n++
		}
	}
}
