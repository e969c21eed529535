package io.rdmanio.selector.config;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The routing rules of a {@code rdmanio.rules} file: one rule a line, first match wins, no match means the JDK's
 * TCP.
 *
 * <pre>
 *   # comment (also after a rule)
 *   (bind|connect) (HOST|IP[/PREFIX]|*) (PORT|PORT-PORT|PORT-*|*) [rdma|tcp|both|auto]
 * </pre>
 *
 * <p>The action defaults to {@code rdma}. IPv4 and IPv6 literals take an optional CIDR prefix; a host name is
 * resolved once, when the file is loaded, and the rule covers every address it resolves to (a name that does not
 * resolve is an error: a rule that silently matches nothing would leave the traffic it names on TCP). A
 * {@code bind} rule decides a server socket's bind by its local address and port; a {@code connect} rule decides
 * an unbound socket's connect by the remote address and port. The wildcard address a server binds to by default
 * ({@code 0.0.0.0} or {@code ::}) is matched by {@code *} and by prefixes that contain it, not by a rule naming
 * one interface's address. A Java SDP configuration file is a valid rules file.
 *
 * <p>Immutable and thread-safe; routing a socket walks the rules and allocates nothing.
 */
public final class Rules implements Router {

    /** Resolves a host name to every address it has, as {@link InetAddress#getAllByName} does. */
    @FunctionalInterface
    public interface HostResolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    /** No rules: every socket stays on the JDK's TCP. */
    public static final Rules NONE = new Rules("(no rules)", List.of());

    private static final int MAX_PORT = 65_535;
    private static final Pattern WHITESPACE = Pattern.compile("[ \t]+");
    private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");
    private static final Pattern DIGITS_AND_DOTS = Pattern.compile("[0-9.]+");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]+");
    // Letters, digits, hyphen and underscore in dot-separated labels; no leading or trailing dot or hyphen.
    private static final Pattern HOST_NAME = Pattern.compile(
            "[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\\.?");

    private final String file;
    private final Rule[] bindRules;
    private final Rule[] connectRules;
    private final int ruleCount;

    private Rules(String file, List<Rule> rules) {
        this.file = file;
        this.bindRules = rules.stream().filter(r -> r.bind).toArray(Rule[]::new);
        this.connectRules = rules.stream().filter(r -> !r.bind).toArray(Rule[]::new);
        this.ruleCount = (int) rules.stream().map(r -> r.route.rule()).distinct().count();
    }

    /**
     * Loads a rules file, resolving host names with the system resolver.
     *
     * @throws RulesException naming the file, line and reason of the first error
     * @throws ConfigException if the file is missing or cannot be read
     */
    public static Rules load(Path file) {
        return load(file, InetAddress::getAllByName);
    }

    /** As {@link #load(Path)}, resolving host names with {@code resolver}. */
    public static Rules load(Path file, HostResolver resolver) {
        String name = file.toString();
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("rules file " + name + " does not exist");
        } catch (AccessDeniedException e) {
            throw new ConfigException("rules file " + name + " cannot be read: permission denied");
        } catch (CharacterCodingException e) {
            throw new ConfigException("rules file " + name + " is not UTF-8 text");
        } catch (IOException e) {
            if (Files.isDirectory(file)) {
                throw new ConfigException("rules file " + name + " is a directory, not a file");
            }
            throw new ConfigException("rules file " + name + " cannot be read: " + e, e);
        }
        return parse(name, lines, resolver);
    }

    /**
     * Parses rules from text; {@code file} names the source in routes and errors.
     *
     * @throws RulesException naming the file, line and reason of the first error
     */
    public static Rules parse(String file, String text, HostResolver resolver) {
        return parse(file, Arrays.asList(text.split("\r?\n|\r", -1)), resolver);
    }

    private static Rules parse(String file, List<String> lines, HostResolver resolver) {
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            new LineParser(file, i + 1, lines.get(i), resolver).parseInto(rules);
        }
        return new Rules(file, rules);
    }

    @Override
    public Route forBind(InetSocketAddress local) {
        Route r = match(bindRules, local);
        InetAddress ip = local.getAddress();
        if (r != Route.NO_MATCH || ip == null || !ip.isAnyLocalAddress()) {
            return r;
        }
        // A wildcard listener listens on this host's loopback too: where the first rule that decides the loopback
        // at this port routes it to a fabric, the listener takes connects there over the fabric and everywhere
        // else over TCP (both), so that a server bound to the wildcard is reached at 127.0.0.1 as on TCP.
        int port = local.getPort();
        for (Rule rule : bindRules) {
            if (rule.matches(LOOPBACK4_ADDRESS, port) || rule.matches(LOOPBACK6_ADDRESS, port)) {
                Action a = rule.route.action();
                return a == Action.TCP ? r : new Route(a == Action.AUTO ? Action.AUTO : Action.BOTH, rule.route.rule());
            }
        }
        return r;
    }

    @Override
    public Route forConnect(InetSocketAddress remote) {
        return match(connectRules, remote);
    }

    /**
     * The first rule that matches; when none does, an address that is one family's loopback ({@code ::1},
     * {@code 127.0.0.1}) takes the first rule that names the other's (that address alone, not a prefix), so that a
     * rule for this host's loopback holds whichever family a program reaches it by (the JDK connects to
     * {@code ::1} for a server's {@code [::]} address).
     */
    private static Route match(Rule[] rules, InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        int port = address.getPort();
        Route r = match(rules, ip, port);
        if (r == Route.NO_MATCH && ip != null) {
            byte[] a = ip.getAddress();
            InetAddress other = Arrays.equals(a, LOOPBACK6) ? LOOPBACK4_ADDRESS
                : Arrays.equals(a, LOOPBACK4) ? LOOPBACK6_ADDRESS : null;
            if (other != null) {
                for (Rule rule : rules) {
                    if (rule.namesLoopback() && rule.matches(other, port)) {
                        return rule.route;
                    }
                }
            }
        }
        return r;
    }

    private static final byte[] LOOPBACK4 = {127, 0, 0, 1};
    private static final byte[] LOOPBACK6 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    private static final InetAddress LOOPBACK4_ADDRESS = unnamed(LOOPBACK4);
    private static final InetAddress LOOPBACK6_ADDRESS = unnamed(LOOPBACK6);

    private static InetAddress unnamed(byte[] address) {
        try {
            return InetAddress.getByAddress(address);
        } catch (java.net.UnknownHostException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static Route match(Rule[] rules, InetAddress ip, int port) {
        for (Rule rule : rules) {
            if (rule.matches(ip, port)) {
                return rule.route;
            }
        }
        return Route.NO_MATCH;
    }

    @Override
    public boolean routesNothing() {
        for (Rule[] rules : new Rule[][] {bindRules, connectRules}) {
            for (Rule rule : rules) {
                if (rule.route.usesFabric()) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether any rule, bind or connect, has the {@code auto} action: only then does the resolver run. */
    public boolean hasAutoRule() {
        if (hasAutoConnectRule()) {
            return true;
        }
        for (Rule rule : bindRules) {
            if (rule.route.action() == Action.AUTO) {
                return true;
            }
        }
        return false;
    }

    /** Whether a connect rule says {@code auto}: only then are connects asked of the resolver. */
    public boolean hasAutoConnectRule() {
        for (Rule rule : connectRules) {
            if (rule.route.action() == Action.AUTO) {
                return true;
            }
        }
        return false;
    }

    /** The file the rules came from, as named. */
    public String file() {
        return file;
    }

    /** The number of rules (a host name with several addresses counts once). */
    public int size() {
        return ruleCount;
    }

    @Override
    public String toString() {
        return "Rules[" + file + ", " + ruleCount + " rules]";
    }

    /** One rule for one network: a host name with several addresses becomes several adjacent rules. */
    private static final class Rule {
        final boolean bind;
        /** {@code null} for {@code *}. */
        final byte[] network;
        final int prefix;
        final int lowPort;
        final int highPort;
        final Route route;

        Rule(boolean bind, byte[] network, int prefix, int lowPort, int highPort, Route route) {
            this.bind = bind;
            this.network = network;
            this.prefix = prefix;
            this.lowPort = lowPort;
            this.highPort = highPort;
            this.route = route;
        }

        /** Whether the rule names a loopback address alone ({@code 127.0.0.1}, {@code ::1}), not a prefix. */
        boolean namesLoopback() {
            return network != null && prefix == network.length * 8
                && (Arrays.equals(network, LOOPBACK4) || Arrays.equals(network, LOOPBACK6));
        }

        boolean matches(InetAddress ip, int port) {
            if (port < lowPort || port > highPort) {
                return false;
            }
            if (network == null) {
                return true;
            }
            if (ip == null) {
                return false;
            }
            return inPrefix(ip.getAddress());
        }

        private boolean inPrefix(byte[] candidate) {
            if (candidate.length != network.length) {
                return false;
            }
            int fullBytes = prefix >>> 3;
            for (int i = 0; i < fullBytes; i++) {
                if (candidate[i] != network[i]) {
                    return false;
                }
            }
            int restBits = prefix & 7;
            if (restBits == 0) {
                return true;
            }
            int mask = (0xFF << (8 - restBits)) & 0xFF;
            return (candidate[fullBytes] & mask) == (network[fullBytes] & mask);
        }
    }

    /** Parses one line; every error names the file, the line and the rule's text. */
    private static final class LineParser {
        private final String file;
        private final int line;
        private final String text;
        private final HostResolver resolver;

        LineParser(String file, int line, String raw, HostResolver resolver) {
            this.file = file;
            this.line = line;
            int hash = raw.indexOf('#');
            this.text = (hash >= 0 ? raw.substring(0, hash) : raw).strip();
            this.resolver = resolver;
        }

        void parseInto(List<Rule> rules) {
            if (text.isEmpty()) {
                return;
            }
            String[] fields = WHITESPACE.split(text);
            if (fields.length < 3) {
                throw error("incomplete rule: expected 'bind|connect HOST PORT [ACTION]'");
            }
            if (fields.length > 4) {
                throw error("unexpected '" + fields[4] + "' after the action");
            }
            boolean bind = parseDirection(fields[0]);
            int[] ports = parsePorts(fields[2]);
            Action action = fields.length == 4 ? parseAction(fields[3]) : Action.RDMA;
            Route route = new Route(action, file + ":" + line + ": " + text);
            String host = fields[1];
            if (host.equals("*")) {
                rules.add(new Rule(bind, null, 0, ports[0], ports[1], route));
                return;
            }
            int slash = host.indexOf('/');
            String address = slash >= 0 ? host.substring(0, slash) : host;
            if (isAddressLiteral(address)) {
                InetAddress ip = parseLiteral(address);
                int bits = ip.getAddress().length * 8;
                int prefix = slash >= 0 ? parsePrefix(host.substring(slash + 1), address, bits, ip) : bits;
                rules.add(new Rule(bind, ip.getAddress(), prefix, ports[0], ports[1], route));
                return;
            }
            if (slash >= 0) {
                throw error("a /PREFIX needs an IP address, not the host name '" + address + "'");
            }
            for (InetAddress ip : resolve(host)) {
                byte[] bytes = ip.getAddress();
                rules.add(new Rule(bind, bytes, bytes.length * 8, ports[0], ports[1], route));
            }
        }

        private boolean parseDirection(String field) {
            switch (field) {
                case "bind":
                    return true;
                case "connect":
                    return false;
                default:
                    throw error("unknown direction '" + field + "': expected bind or connect");
            }
        }

        private Action parseAction(String field) {
            switch (field) {
                case "rdma":
                    return Action.RDMA;
                case "tcp":
                    return Action.TCP;
                case "both":
                    return Action.BOTH;
                case "auto":
                    return Action.AUTO;
                default:
                    throw error("unknown action '" + field + "': expected rdma, tcp, both or auto");
            }
        }

        private int[] parsePorts(String field) {
            if (field.equals("*")) {
                return new int[] {0, MAX_PORT};
            }
            int dash = field.indexOf('-');
            if (dash < 0) {
                int port = parsePort(field, field);
                return new int[] {port, port};
            }
            String lowText = field.substring(0, dash);
            String highText = field.substring(dash + 1);
            if (lowText.isEmpty() || highText.isEmpty() || lowText.equals("*")) {
                throw error("bad port range '" + field + "': expected PORT, PORT-PORT, PORT-* or *");
            }
            int low = parsePort(lowText, field);
            int high = highText.equals("*") ? MAX_PORT : parsePort(highText, field);
            if (low > high) {
                throw error("port range '" + field + "' runs backwards: " + low + " > " + high);
            }
            return new int[] {low, high};
        }

        private int parsePort(String digits, String field) {
            if (digits.isEmpty() || digits.length() > 5 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw error("bad port '" + digits + "' in '" + field + "': expected a number 0..65535 or *");
            }
            int port = Integer.parseInt(digits);
            if (port > MAX_PORT) {
                throw error("port " + port + " out of range 0..65535");
            }
            return port;
        }

        private boolean isAddressLiteral(String address) {
            return address.indexOf(':') >= 0 || address.startsWith("[") || DIGITS_AND_DOTS.matcher(address).matches();
        }

        private InetAddress parseLiteral(String address) {
            if (address.indexOf(':') < 0 && !address.startsWith("[")) {
                if (!IPV4.matcher(address).matches()) {
                    throw error("bad IPv4 address '" + address + "': expected four numbers 0..255 separated by dots");
                }
                for (String part : address.split("\\.")) {
                    if (Integer.parseInt(part) > 255) {
                        throw error("bad IPv4 address '" + address + "': " + part + " is more than 255");
                    }
                }
            } else {
                String bare = address.startsWith("[") && address.endsWith("]")
                        ? address.substring(1, address.length() - 1) : address;
                if (!IPV6_CHARS.matcher(bare).matches()) {
                    throw error("bad IPv6 address '" + address + "'");
                }
                // In brackets getByName parses the literal and never falls back to a name lookup.
                address = "[" + bare + "]";
            }
            try {
                return InetAddress.getByName(address);
            } catch (UnknownHostException e) {
                throw error("bad IPv6 address '" + address.substring(1, address.length() - 1) + "'");
            }
        }

        private int parsePrefix(String digits, String address, int bits, InetAddress ip) {
            if (digits.isEmpty() || digits.length() > 3 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw error("bad prefix '/" + digits + "' after '" + address + "': expected a number of bits");
            }
            int prefix = Integer.parseInt(digits);
            // An IPv4-mapped IPv6 literal (::ffff:a.b.c.d) parses as IPv4: its prefix counts the 96 mapping bits.
            if (bits == 32 && address.indexOf(':') >= 0) {
                if (prefix < 96 || prefix > 128) {
                    throw error("prefix /" + prefix + " out of range 96..128 for the IPv4-mapped address '" + address + "'");
                }
                return prefix - 96;
            }
            if (prefix > bits) {
                throw error("prefix /" + prefix + " out of range 0.." + bits + " for the "
                        + (bits == 32 ? "IPv4" : "IPv6") + " address '" + address + "'");
            }
            return prefix;
        }

        private InetAddress[] resolve(String host) {
            if (!HOST_NAME.matcher(host).matches()) {
                throw error("bad host '" + host + "': expected a host name, an IP address[/PREFIX] or *");
            }
            try {
                InetAddress[] all = resolver.resolve(host);
                if (all == null || all.length == 0) {
                    throw new UnknownHostException(host);
                }
                return all;
            } catch (UnknownHostException e) {
                throw error("host name '" + host + "' does not resolve");
            }
        }

        private RulesException error(String reason) {
            return new RulesException(file, line, reason, text);
        }
    }
}
