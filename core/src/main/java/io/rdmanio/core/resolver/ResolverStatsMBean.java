package io.rdmanio.core.resolver;

import java.lang.management.ManagementFactory;
import java.util.Map;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The resolver's counters as a read-only MBean, {@code io.rdmanio:type=Resolver}, one {@code long} attribute per
 * counter of {@link ResolverStats#snapshot()} (same names). Registered for the process's resolver only.
 * Thread-safe.
 */
final class ResolverStatsMBean implements DynamicMBean {

    static final String NAME = "io.rdmanio:type=Resolver";

    private final ResolverStats stats;

    private ResolverStatsMBean(ResolverStats stats) {
        this.stats = stats;
    }

    /** Registers (replacing an earlier registration); returns whether it worked. Failure is not fatal. */
    static boolean tryRegister(ResolverStats stats) {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(NAME);
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(new ResolverStatsMBean(stats), name);
            return true;
        } catch (JMException | RuntimeException e) {
            return false;
        }
    }

    static void tryUnregister() {
        try {
            ObjectName name = new ObjectName(NAME);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
        } catch (JMException | RuntimeException e) {
            // gone already
        }
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
        Long v = stats.snapshot().get(attribute);
        if (v == null) {
            throw new AttributeNotFoundException("no resolver counter named " + attribute);
        }
        return v;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException("resolver counters are read-only: " + attribute.getName());
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        Map<String, Long> snapshot = stats.snapshot();
        AttributeList list = new AttributeList();
        for (String a : attributes) {
            Long v = snapshot.get(a);
            if (v != null) {
                list.add(new Attribute(a, v));
            }
        }
        return list;
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) {
        throw new UnsupportedOperationException("the resolver MBean has no operations");
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        Map<String, Long> snapshot = stats.snapshot();
        MBeanAttributeInfo[] attributes = new MBeanAttributeInfo[snapshot.size()];
        int i = 0;
        for (String name : snapshot.keySet()) {
            attributes[i++] = new MBeanAttributeInfo(name, "long", "resolver counter " + name, true, false, false);
        }
        return new MBeanInfo(ResolverStatsMBean.class.getName(), "rdmanio resolver counters", attributes, null, null,
            null);
    }
}
