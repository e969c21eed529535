package io.rdmanio.core.resolver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

class ResolverStatsMBeanTest {

    @Test
    void countersAreAttributesWithTheirStableNames() throws Exception {
        ResolverStats stats = new ResolverStats();
        stats.forged.add(3);
        assertTrue(ResolverStatsMBean.tryRegister(stats));
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(ResolverStatsMBean.NAME);
            assertEquals(3L, server.getAttribute(name, "forged"));
            assertEquals(stats.snapshot().size(), server.getMBeanInfo(name).getAttributes().length);
        } finally {
            ResolverStatsMBean.tryUnregister();
        }
    }
}
