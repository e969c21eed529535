package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The {@code rdmanio-agent} artifact: its POM passes no dependency on to a build that adds it, and its jar (the
 * reactor packages the agent module before this one) is a working agent on its own.
 */
class AgentArtifactTest {

    @TempDir
    Path dir;

    private static Path agentModule() {
        String root = System.getProperty("rdmanio.root");
        return root == null ? Path.of("..", "agent") : Path.of(root, "agent");
    }

    @Test
    void itsPomPassesNoDependencyOn() throws Exception {
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder()
            .parse(agentModule().resolve("pom.xml").toFile()).getDocumentElement();
        assertEquals("rdmanio-agent", child(project, "artifactId"));
        NodeList deps = project.getElementsByTagName("dependency");
        assertTrue(deps.getLength() > 0, "the build-order dependency on the selector module");
        for (int i = 0; i < deps.getLength(); i++) {
            Element d = (Element) deps.item(i);
            String scope = child(d, "scope");
            assertTrue("provided".equals(scope) || "test".equals(scope),
                child(d, "artifactId") + " would be passed on to users (scope " + scope + ")");
        }
    }

    @Test
    void itsJarIsAWorkingAgent() throws Exception {
        Path jar = null;
        Path target = agentModule().resolve("target");
        if (Files.isDirectory(target)) {
            try (DirectoryStream<Path> jars = Files.newDirectoryStream(target, "rdmanio-agent-*.jar")) {
                for (Path p : jars) {
                    jar = p;
                }
            }
        }
        Assumptions.assumeTrue(jar != null, "needs the agent module packaged ('mvn -B package' does it before this one)");
        Path rules = dir.resolve("hello.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-javaagent:" + jar.toAbsolutePath() + "=rules=" + rules + ",fabric=shm,stats=" + stats,
            "-cp", locationOf(QuietAgentTest.Hello.class), QuietAgentTest.Hello.class.getName(), "socket"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the JVM ended");
        assertEquals(0, p.exitValue(), out);
        assertEquals("hello over a socket\n", out);
        assertEquals(2, AgentJvm.stat(stats, "connections", "rdma"), out);
    }

    /**
     * libdisni's jar per architecture: its classifier and its folder are the name the disni fabric looks up at run
     * time on this machine ({@code linux-x86_64} where the JDK says amd64).
     */
    @Test
    void theNativeJarIsNamedAsTheRuntimeLooksItUp() throws Exception {
        String arch = System.getProperty("os.arch").equals("amd64") ? "x86_64" : System.getProperty("os.arch");
        String root = System.getProperty("rdmanio.root");
        Path target = (root == null ? Path.of("..", "native") : Path.of(root, "native")).resolve("target");
        Path jar = null;
        if (Files.isDirectory(target)) {
            try (DirectoryStream<Path> jars = Files.newDirectoryStream(target, "rdmanio-native-*-linux-*.jar")) {
                for (Path p : jars) {
                    jar = p;
                }
            }
        }
        Assumptions.assumeTrue(jar != null, "needs libdisni built (rdma-core's headers; ./rdmanio test installs them)");
        assertTrue(jar.getFileName().toString().endsWith("-linux-" + arch + ".jar"), jar.toString());
        try (java.util.jar.JarFile j = new java.util.jar.JarFile(jar.toFile())) {
            assertTrue(j.getEntry("META-INF/native/linux-" + arch + "/libdisni.so") != null, "libdisni in " + jar);
        }
    }

    private static String child(Element e, String tag) {
        NodeList n = e.getChildNodes();
        for (int i = 0; i < n.getLength(); i++) {
            if (n.item(i) instanceof Element c && c.getTagName().equals(tag)) {
                return c.getTextContent().trim();
            }
        }
        return null;
    }

    private static String locationOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
