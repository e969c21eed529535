package io.rdmanio.examples.agent;

import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;

/** Prints the JVM's provider and the class of the selector {@code Selector.open()} gives. */
public final class ProviderName {

    private ProviderName() {
    }

    public static void main(String[] args) throws Exception {
        try (Selector s = Selector.open()) {
            System.out.println(SelectorProvider.provider().getClass().getName() + " " + s.getClass().getName());
        }
    }
}
