package io.rdmanio.selector;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.selector.config.ConfigLoader;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.BeforeAll;

/**
 * The suite against rdmanio as a JVM without a rules file gets it: the provider built by its public no-argument
 * constructor, which the JVM calls for {@code -Djava.nio.channels.spi.SelectorProvider} and the agent, with the
 * configuration read from system properties and no {@code rdmanio.rules}. Every channel is the JDK's underneath,
 * and every outcome must be the JDK's ({@link JdkProviderConformanceTest}). Unlike {@link TcpRoutedConformanceTest}
 * (a test router that matches nothing) this goes through the configuration loader, the empty rule set and the real
 * fabric choice, which must never be consulted.
 */
class NoRulesConformanceTest extends AbstractNioConformanceTest {

    private static SelectorProvider provider;

    @BeforeAll
    static void openProvider() {
        assumeTrue(System.getProperty(ConfigLoader.RULES) == null, "this JVM was started with rdmanio.rules set");
        provider = new RdmaSelectorProvider();
    }

    @Override
    protected SelectorProvider provider() {
        return provider;
    }
}
