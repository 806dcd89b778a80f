package suites

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/lockcheck/lockcheck/topology"
)

// Available is one build's image, or why there is none.
type Available struct {
	Build  topology.Build
	Image  string
	Reason string
}

// ObtainAll makes every catalog build's image present where that is
// possible here (building offline ones from Debian's archive) and returns
// each with its image or the reason it is unavailable. Set
// LOCKCHECK_NO_BUILD=1 to use only images already present.
func ObtainAll(ctx context.Context, eng *topology.Engine, progress io.Writer) []Available {
	var out []Available
	for _, b := range topology.Builds() {
		img := eng.Resolve(ctx, b, topology.Sources{})
		if img.Status == topology.Buildable && os.Getenv("LOCKCHECK_NO_BUILD") != "" {
			out = append(out, Available{Build: b, Reason: "not built (LOCKCHECK_NO_BUILD is set): lockcheck images --build " + b.Name})
			continue
		}
		if img.Status == topology.Unavailable {
			out = append(out, Available{Build: b, Reason: fmt.Sprintf("%s; fix: %s", img.Reason, img.Fix)})
			continue
		}
		got, err := eng.Obtain(ctx, b, topology.Sources{}, progress)
		if err != nil {
			out = append(out, Available{Build: b, Reason: err.Error()})
			continue
		}
		out = append(out, Available{Build: b, Image: got.Ref})
	}
	return out
}
