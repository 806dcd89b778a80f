package topology_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	tc "github.com/testcontainers/testcontainers-go"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

// The path users with a registry take: official images by their official
// names. A registry (Debian's docker-registry) on loopback holds a build
// made here under an official name; lockcheck, told the registry, lists it
// pullable, pulls it and runs on it; a copy whose server reports another
// version than its name's build is refused in one line.
var _ = Describe("a registry on loopback", Ordered, Label("registry", suites.KindLabel(topology.Standalone)), func() {
	var (
		reg string
		cli *tc.DockerClient
	)
	BeforeAll(func(ctx SpecContext) {
		bin, err := exec.LookPath("docker-registry")
		Expect(err).NotTo(HaveOccurred(), "docker-registry is not installed: make setup installs it (apt-get install docker-registry)")
		reg = startRegistry(bin)
		cli, err = tc.NewDockerClientWithOpts(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cli.Close)
	}, NodeTimeout(time.Minute))

	// push tags the image of build from under the official name of build
	// as, pushes it and drops the local tag, so that using it means pulling.
	push := func(ctx context.Context, from, as string) string {
		src := env.Available[from]
		if src.Image == "" {
			Skip("unavailable: " + src.Reason)
		}
		b, err := topology.Lookup(as)
		Expect(err).NotTo(HaveOccurred())
		ref := b.OfficialRef(reg)
		_, err = cli.ImageTag(ctx, client.ImageTagOptions{Source: src.Image, Target: ref})
		Expect(err).NotTo(HaveOccurred())
		rc, err := cli.ImagePush(ctx, ref, client.ImagePushOptions{RegistryAuth: "e30="}) // {}: no credentials
		Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(rc)
		rc.Close()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(body)).NotTo(ContainSubstring(`"error"`), "push %s", ref)
		drop := func(ctx context.Context) {
			cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{})
		}
		drop(ctx)
		DeferCleanup(drop)
		return ref
	}

	It("lists a build pushed under its official name as pullable, pulls it and runs on it", func(ctx SpecContext) {
		ref := push(ctx, "valkey-9.1", "valkey-9.1")
		src := topology.Sources{Registry: reg}
		b, _ := topology.Lookup("valkey-9.1")
		img := env.Engine.Resolve(ctx, b, src)
		Expect(img.Status).To(Equal(topology.Pullable), "%s: %s", img.Ref, img.Reason)
		Expect(img.Ref).To(Equal(ref))

		s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1"}, ClientSettings: scenarios.ClientSettings{Client: "native"}, TrafficSettings: scenarios.TrafficSettings{Duration: 3 * time.Second, TTL: time.Second, Seed: 1}}
		out, err := harness.Execute(ctx, env.Engine, s, harness.Options{Out: suites.RunDir(), Sources: src, Log: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.History.Meta.Version).To(HavePrefix("9.1."))
		Expect(out.History.Ops).NotTo(BeEmpty())
		log, err := os.ReadFile(filepath.Join(out.Out, "run.log"))
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("run", string(log[:min(len(log), 400)]))
		after := env.Engine.Resolve(ctx, b, src)
		Expect(after.Status).To(Equal(topology.Present), "pulled")
		Expect(after.Ref).To(Equal(ref))
	}, SpecTimeout(3*time.Minute))

	It("refuses, in one line, an image whose server reports another version than its name's build", func(ctx SpecContext) {
		// 9.1 under valkey/valkey:9.0.7: the registry has its layers from
		// the spec before, so the push only adds a tag, where another
		// build's image would be compressed and uploaded whole.
		ref := push(ctx, "valkey-9.1", "valkey-9.0")
		src := topology.Sources{Registry: reg}
		s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.0"}, ClientSettings: scenarios.ClientSettings{Client: "native"}, TrafficSettings: scenarios.TrafficSettings{Duration: 3 * time.Second, TTL: time.Second, Seed: 1}}
		_, err := harness.Execute(ctx, env.Engine, s, harness.Options{Out: suites.RunDir(), Sources: src, Log: GinkgoWriter})
		Expect(err).To(HaveOccurred(), "a mislabelled %s", ref)
		Expect(err.Error()).To(ContainSubstring("reports version 9.1"))
		Expect(err.Error()).To(ContainSubstring("want 9.0"))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
	}, SpecTimeout(3*time.Minute))
})

// startRegistry runs docker-registry on a free loopback port until the
// suite ends and returns its HOST:PORT.
func startRegistry(bin string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := ln.Addr().String()
	ln.Close()
	dir := GinkgoT().TempDir()
	conf := filepath.Join(dir, "config.yml")
	Expect(os.WriteFile(conf, []byte(fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
`, filepath.Join(dir, "store"), addr)), 0o644)).To(Succeed())
	cmd := exec.Command(bin, "serve", conf)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	Eventually(func() (int, error) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}).WithTimeout(10 * time.Second).Should(Equal(http.StatusOK))
	return strings.TrimSpace(addr)
}
