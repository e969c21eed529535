package io.rdmanio.examples.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.examples.agent.AgentJvm;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that brings its own SLF4J and its own, newer Netty (4.2, where the agent was built with 4.1) and loads it in a
 * parent-first child class loader, as fat-jar launchers do, runs over the fabric with only the agent flag: the
 * Netty classes inside the agent are relocated, so the application's are the only {@code io.netty} classes the
 * JVM has. Before the relocation, the parent (the system loader, where the agent jar is) answered first with the
 * agent's Netty 4.1 buffer classes, and the application's Netty 4.2 event loop failed with NoSuchMethodError; its
 * SLF4J's {@code LoggerFactory} came from the agent too and found no provider (the application's logging gone).
 */
class NettyInAChildLoaderTest {

    /** Copied by the examples' build (maven-dependency-plugin), never on this module's class path. */
    private static final Path APPLICATION_NETTY = Path.of("target", "netty-4.2");

    @TempDir
    Path dir;

    @Test
    void theAgentJarCarriesNoDependencyUnderItsOwnName() throws Exception {
        try (JarFile jar = new JarFile(AgentJvm.agentJar().toFile())) {
            List<String> netty = jar.stream().map(e -> e.getName())
                .filter(n -> n.startsWith("io/netty/") && n.endsWith(".class")).limit(5).toList();
            assertEquals(List.of(), netty, "classes an application's Netty would meet");
            assertEquals(0, jar.stream().filter(e -> e.getName().startsWith("org/slf4j/")).count(),
                "classes an application's SLF4J would meet");
            assertEquals(0, jar.stream().filter(e -> e.getName().startsWith("com/ibm/disni/")
                && e.getName().endsWith(".class")).count(), "classes an application's DiSNI would meet");
            assertTrue(jar.getEntry("META-INF/rdmanio/disni/com/ibm/disni/verbs/RdmaCmId.class") != null,
                "DiSNI, where only the disni fabric's class loader reads it");
            assertTrue(jar.stream().anyMatch(e -> e.getName().startsWith("io/rdmanio/internal/netty/buffer/")),
                "the relocated buffer classes core needs");
        }
    }

    @Test
    void anApplicationWithNetty42InAParentFirstChildLoaderRunsOverTheFabric() throws Exception {
        List<String> appClassPath = new ArrayList<>();
        try (Stream<Path> jars = Files.list(APPLICATION_NETTY)) {
            jars.filter(p -> p.toString().endsWith(".jar")).sorted()
                .forEach(p -> appClassPath.add(p.toAbsolutePath().toString()));
        }
        assertEquals(4, appClassPath.size(), "netty-common, -buffer, -resolver and -transport in " + APPLICATION_NETTY);
        // The application's SLF4J and its provider, in its own loader too.
        appClassPath.add(locationOf(org.slf4j.LoggerFactory.class));
        appClassPath.add(locationOf(org.slf4j.simple.SimpleLogger.class));
        appClassPath.add(locationOf(NettyEchoDemo.class));
        Path rules = dir.resolve("netty.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.runAlone(dir, "rules=" + rules + ",fabric=loopback,stats=" + stats,
            ChildLoaderLauncher.class, String.join(File.pathSeparator, appClassPath), NettyEchoDemo.class.getName(),
            "127.0.0.1", "--clients", "4", "--bytes", "500000");
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.stdout().contains("io.netty.buffer.ByteBuf from netty-buffer-4.2.18.Final.jar in loader"
            + " application"), o::describe);
        assertTrue(o.stdout().contains("io.netty.channel.nio.NioEventLoopGroup from netty-transport-4.2.18.Final.jar"),
            o::describe);
        assertTrue(o.stdout().contains("all netty echoes intact"), o::describe);
        assertTrue(o.stdout().contains("org.slf4j.LoggerFactory in loader application"), o::describe);
        assertTrue(o.stderr().contains("WARN application - the application's own log line"),
            "the application's SLF4J bound to its own provider: " + o.describe());
        assertTrue(!o.stderr().contains("No SLF4J providers"), o::describe);
        assertEquals(8, AgentJvm.stat(stats, "connections", "rdma"), o::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), o::describe);
        assertEquals(4L * 500_000 * 4, AgentJvm.stat(stats, "bytes", "rdma"), o::describe);
    }

    private static String locationOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
