package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.resolver.ResolverInterfaces;
import io.rdmanio.core.resolver.ResolverSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorTest {

    private static final FabricDirectory ONLY_LOOPBACK = new FabricDirectory() {
        @Override
        public String unavailableReason(String fabricName) {
            return fabricName.equals("loopback") ? null : "the " + fabricName + " fabric is not in this build";
        }

        @Override
        public Engine engine(String fabricName) throws IOException {
            throw new IOException("not opened in this test");
        }
    };

    private static String run(Map<String, String> properties, int expectedExit) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = Doctor.run(properties::get, ONLY_LOOPBACK, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(expectedExit, exit, out);
        return out;
    }

    @Test
    void reportsFabricsAndAValidConfiguration(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("ok.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        String out = run(Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "loopback"), 0);
        assertTrue(out.contains("fabric loopback: available\n"), out);
        assertTrue(out.contains("fabric shm: unavailable: the shm fabric is not in this build\n"), out);
        assertTrue(out.contains("rdmanio.fabric=auto would use: nothing"), out);
        assertTrue(out.contains("rdmanio.rules=" + rules + ": 2 rules, no errors\n"), out);
    }

    private static ResolverInterfaces.Address addr(String ip, int prefix, String brd) throws Exception {
        return new ResolverInterfaces.Address(InetAddress.getByName(ip), prefix,
            brd == null ? null : InetAddress.getByName(brd));
    }

    @Test
    void saysPerInterfaceHowTheResolverReachesPeersOrWhyItCannot() throws Exception {
        List<ResolverInterfaces.Nic> nics = List.of(
            new ResolverInterfaces.Nic("lo", 1, true, true, false, false, List.of(addr("127.0.0.1", 8, null),
                addr("::1", 128, null))),
            new ResolverInterfaces.Nic("eth0", 2, true, false, false, true, List.of(addr("10.1.2.3", 24, "0.0.0.0"),
                addr("10.9.0.3", 16, "10.9.255.255"), addr("fd00::3", 64, null), addr("fe80::1", 64, null))),
            new ResolverInterfaces.Nic("tun0", 3, true, false, true, false, List.of(addr("10.8.0.1", 32, null),
                addr("fd01::1", 128, null))),
            new ResolverInterfaces.Nic("eth1", 4, false, false, false, true, List.of(addr("192.168.5.5", 24,
                "192.168.5.255"))),
            new ResolverInterfaces.Nic("eth2", 5, true, false, false, true, List.of(addr("192.168.6.6", 32, null))));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Doctor.interfaces(ResolverSettings.DEFAULT, nics, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("resolver interface lo: loopback: queries for this host's addresses (IPv4 and IPv6) go"
            + " to 127.255.255.255, which every rdmanio process on this host hears\n"), out);
        assertTrue(out.contains("resolver interface eth0: 10.1.2.3/24: broadcast 10.1.2.255, computed from the /24"
            + " prefix (the address has no broadcast address set)\n"), out);
        assertTrue(out.contains("resolver interface eth0: 10.9.0.3/16: broadcast 10.9.255.255\n"), out);
        assertTrue(out.contains("resolver interface eth0: fd00:0:0:0:0:0:0:3/64: IPv6 multicast"
            + " ff12:0:0:0:0:0:5244:5253"), out);
        assertTrue(out.contains("resolver interface tun0: 10.8.0.1/32: cannot broadcast: a point-to-point link;"
            + " peers on it are asked by unicast, which reaches only one rdmanio process on their host (list them"
            + " in rdmanio.resolver.file)\n"), out);
        assertTrue(out.contains("resolver interface tun0: fd01:0:0:0:0:0:0:1/128: cannot multicast: a point-to-point"
            + " link"), out);
        assertTrue(out.contains("resolver interface eth1: down: the resolver cannot work on it until it is up\n"),
            out);
        assertTrue(out.contains("resolver interface eth2: 192.168.6.6/32: cannot broadcast: a /32 prefix has no"
            + " broadcast address"), out);
        assertTrue(!out.contains("fe80"), "link-local addresses are not listed: " + out);

        ByteArrayOutputStream named = new ByteArrayOutputStream();
        Doctor.interfaces(ResolverSettings.DEFAULT.withInterfaces(List.of("eth0", "ib9")), nics,
            new PrintStream(named, true, StandardCharsets.UTF_8));
        String only = named.toString(StandardCharsets.UTF_8);
        assertTrue(only.contains("resolver interface ib9: does not exist (named in rdmanio.resolver.interfaces): the"
            + " resolver cannot work on it\n"), only);
        assertTrue(!only.contains("tun0") && only.contains("eth0"), only);
    }

    @Test
    void reportsTheErrorWithFileAndLine(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("bad.rules");
        Files.writeString(rules, "connect * 70000\n");
        String out = run(Map.of("rdmanio.rules", rules.toString()), 1);
        assertTrue(out.contains("configuration: ERROR " + rules + ":1: port 70000 out of range 0..65535"), out);
    }

    @Test
    void aConfiguredFabricThatCannotOpenIsAProblemWithItsFix(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("ok.rules");
        Files.writeString(rules, "connect 127.0.0.1 *\n");
        List<String> problems = new ArrayList<>();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = Doctor.run(Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "disni")::get,
            ONLY_LOOPBACK, new PrintStream(bytes, true, StandardCharsets.UTF_8), problems);
        assertEquals(0, exit, "the configuration itself loads");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("rdmanio.fabric=disni cannot open here: the disni fabric is not in this"
            + " build; for peers on this host use -Drdmanio.fabric=shm"), problems.get(0));

        problems.clear();
        Doctor.run(Map.of("rdmanio.rules", rules.toString())::get, ONLY_LOOPBACK,
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), problems);
        assertEquals(1, problems.size(), "auto with rules and no fabric: " + problems);
        assertTrue(problems.get(0).startsWith("rdmanio.fabric=auto has no fabric for the routed connections"),
            problems.get(0));

        problems.clear();
        Doctor.run(Map.of("rdmanio.fabric", "loopback")::get, ONLY_LOOPBACK,
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), problems);
        assertEquals(List.of(), problems);
    }

    @Test
    void printsTheEffectiveConfigurationWithoutTheKey() {
        String out = run(Map.of("rdmanio.fabric", "loopback", "rdmanio.ringDepth", "8",
            "rdmanio.resolver.key", "secret-words-of-twenty"), 0);
        assertTrue(out.contains("effective configuration:\n  rdmanio.fabric=loopback\n"
            + "  rdmanio.resolver.key=(set, 22 characters, not shown)\n  rdmanio.ringDepth=8\n"), out);
        assertTrue(out.contains("  engine: slotSize unset: the fabric's preference (shm 65536, loopback and disni"
            + " 16384), ringDepth 8, controlSlots 2, spinMicros 50, lingerMillis 30000, lingerMaxBytes 268435456\n"),
            out);
        assertTrue(!out.contains("secret-words"), out);
    }

    @Test
    void findingsPrintAsTextAndAsJson() {
        Doctor.Findings f = new Doctor.Findings();
        f.section("configuration").println("fabric shm: available");
        f.section("rdma").println("rdma devices: none");
        f.section("rdma").println("memlock \"8\" KiB");
        assertEquals("rdmanio 1.2\nfabric shm: available\nrdma devices: none\nmemlock \"8\" KiB\n"
            + "doctor: no problems found (exit 0)\n", f.text("1.2", 0));
        f.problems.add("unknown property -Drdmanio.fabirc is ignored (did you mean rdmanio.fabric?)");
        assertTrue(f.text("1.2", 1).endsWith("doctor: 1 problem(s) (exit 1):\n  - unknown property"
            + " -Drdmanio.fabirc is ignored (did you mean rdmanio.fabric?)\n"), f.text("1.2", 1));
        assertEquals("{\n  \"version\": \"1.2\",\n  \"status\": 1,\n  \"problems\": [\n    \"unknown property"
            + " -Drdmanio.fabirc is ignored (did you mean rdmanio.fabric?)\"\n  ],\n  \"sections\": {\n"
            + "    \"configuration\": [\n      \"fabric shm: available\"\n    ],\n    \"rdma\": [\n"
            + "      \"rdma devices: none\",\n      \"memlock \\\"8\\\" KiB\"\n    ]\n  }\n}\n", f.json("1.2", 1));
    }

    /** The doctor as the launcher runs it: in the caller's directory, a relative rules path, exit codes, JSON. */
    @Test
    void asAProcessItReadsPathsFromItsDirectoryAndExitsOnProblems(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("here.rules"), "connect 127.0.0.1 *\n");
        Process ok = doctor(dir, "-Drdmanio.rules=here.rules", "-Drdmanio.fabric=loopback");
        String out = new String(ok.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, ok.waitFor(), out);
        assertTrue(out.contains("rdmanio.rules=here.rules (" + dir.resolve("here.rules").toRealPath()) || out.contains(
            "rdmanio.rules=here.rules (" + dir.resolve("here.rules")), out);
        assertTrue(out.endsWith("doctor: no problems found (exit 0)\n"), out);
        if (out.contains("rdma PROBLEM")) {
            // On a machine without RDMA: said, and not counted against a configuration that does not use it.
            assertTrue(out.contains("doctor: the ") && out.contains("'rdma PROBLEM' line(s) above matter only where"
                + " the disni fabric is wanted") && out.contains("(rdmanio.fabric=loopback) does not use it"), out);
        }

        Process bad = doctor(dir, "-Drdmanio.fabirc=loopback", "-Drdmanio.fabric=loopback", Doctor.JSON);
        String json = new String(bad.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, bad.waitFor(), json);
        assertTrue(json.startsWith("{\n  \"version\": ") && json.contains("\"status\": 1,\n  \"problems\": [\n"
            + "    \"unknown property -Drdmanio.fabirc is ignored (did you mean rdmanio.fabric?)\"\n  ],"), json);
    }

    private static Process doctor(Path dir, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path")));
        List<String> rest = new ArrayList<>();
        for (String a : args) {
            (a.startsWith("-D") ? cmd : rest).add(a);
        }
        cmd.add(Doctor.class.getName());
        cmd.addAll(rest);
        return new ProcessBuilder(cmd).directory(dir.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }
}
