package io.rdmanio.examples.netty;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A launcher in the manner of a fat-jar launcher: the application and its libraries are not on the class path but
 * in a class loader of their own, whose parent is the system class loader, asked first (the JDK's default
 * delegation). So a library the agent jar also carried would come from the agent, whatever version the
 * application brought.
 *
 * <pre>ChildLoaderLauncher APP_CLASS_PATH MAIN_CLASS [ARGS...]</pre>
 *
 * Prints where the application's Netty classes came from, logs a line through the application's SLF4J when it has
 * one, then runs its main.
 */
public final class ChildLoaderLauncher {

    private ChildLoaderLauncher() {
    }

    public static void main(String[] args) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String entry : args[0].split(File.pathSeparator)) {
            urls.add(Path.of(entry).toUri().toURL());
        }
        URLClassLoader app = new URLClassLoader("application", urls.toArray(new URL[0]),
            ClassLoader.getSystemClassLoader());
        Thread.currentThread().setContextClassLoader(app);
        for (String name : List.of("io.netty.buffer.ByteBuf", "io.netty.channel.nio.NioEventLoopGroup")) {
            Class<?> c = Class.forName(name, false, app);
            System.out.println(name + " from " + Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI())
                .getFileName() + " in loader " + c.getClassLoader().getName());
        }
        // The application's SLF4J, when it brought one: it must bind to the application's provider.
        try {
            Class<?> factory = Class.forName("org.slf4j.LoggerFactory", true, app);
            System.out.println("org.slf4j.LoggerFactory in loader " + factory.getClassLoader().getName());
            Object logger = factory.getMethod("getLogger", String.class).invoke(null, "application");
            logger.getClass().getMethod("warn", String.class).invoke(logger, "the application's own log line");
        } catch (ClassNotFoundException e) {
            System.out.println("no SLF4J in the application");
        }
        Method main = Class.forName(args[1], true, app).getMethod("main", String[].class);
        main.invoke(null, (Object) Arrays.copyOfRange(args, 2, args.length));
    }
}
