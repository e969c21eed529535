package io.rdmanio.selector.agent;

import io.rdmanio.selector.JavaNetRouting;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.ProtectionDomain;
import java.util.concurrent.atomic.AtomicInteger;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Lets an application install its own java.net socket implementation factory after rdmanio's: java.net takes one
 * factory per JVM and refuses a second ("factory already defined"), and rdmanio's is installed before the
 * application runs. The agent rewrites the two setters, {@code Socket.setSocketImplFactory} and
 * {@code ServerSocket.setSocketFactory}, so that each first asks the factory in place to step aside when it is
 * rdmanio's ({@link JavaNetRouting}: it clears the field and says that java.net is no longer routed), and then
 * goes on as the JDK's code does. Nothing else of java.net changes. The inserted code names only java.base's
 * types (the factory is recognised by its class name and called as a {@link Runnable}), so the rewritten class
 * needs no access to rdmanio's.
 *
 * <p>Without retransformation (a JVM that does not offer it) or when the rewrite fails, java.net keeps the JDK's
 * behaviour: the application's setter throws, and the log says how to run it ({@code -Drdmanio.javaNet=false}).
 */
final class FactoryHandover implements ClassFileTransformer {

    private static final String FACTORY = "java/net/SocketImplFactory";
    private static final String FACTORY_DESC = "(L" + FACTORY + ";)V";

    /** Setters rewritten by the last retransformation (of the two). */
    private final AtomicInteger rewritten = new AtomicInteger();

    private FactoryHandover() {
    }

    /** Rewrites the setters; false (and nothing changed) if the JVM cannot. */
    static boolean install(Instrumentation inst) {
        if (!inst.isRetransformClassesSupported()) {
            return false;
        }
        FactoryHandover t = new FactoryHandover();
        inst.addTransformer(t, true);
        try {
            inst.retransformClasses(Socket.class, ServerSocket.class);
            if (t.rewritten.get() == 2) {
                return true;
            }
            // A class this ASM cannot read (a newer JDK's): the setters stay the JDK's.
            inst.removeTransformer(t);
            return false;
        } catch (UnmodifiableClassException | RuntimeException | LinkageError e) {
            inst.removeTransformer(t);
            return false;
        }
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String className, Class<?> redefined,
                            ProtectionDomain domain, byte[] bytes) {
        String setter;
        if ("java/net/Socket".equals(className)) {
            setter = "setSocketImplFactory";
        } else if ("java/net/ServerSocket".equals(className)) {
            setter = "setSocketFactory";
        } else {
            return null;
        }
        try {
            byte[] b = rewrite(bytes, className, setter);
            rewritten.incrementAndGet();
            return b;
        } catch (RuntimeException e) {
            // The class stays as it was: the JDK's behaviour, an application's setter refused.
            return null;
        }
    }

    /** {@code owner}'s {@code setter}, with the handover inserted before its first instruction. */
    static byte[] rewrite(byte[] bytes, String owner, String setter) {
        ClassReader reader = new ClassReader(bytes);
        // Frames are read expanded, so that the method's own frames are written again after the inserted ones;
        // every other method is copied as it is.
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        boolean[] found = {false};
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String desc, String signature,
                                             String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, name, desc, signature, exceptions);
                if (!name.equals(setter) || !desc.equals(FACTORY_DESC) || (access & Opcodes.ACC_STATIC) == 0) {
                    return mv;
                }
                found[0] = true;
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        insertHandover(mv, owner);
                    }
                };
            }
        }, ClassReader.EXPAND_FRAMES);
        if (!found[0]) {
            throw new IllegalStateException(owner + "." + setter + " not found");
        }
        return writer.toByteArray();
    }

    /**
     * <pre>{@code
     *   SocketImplFactory f = OWNER.factory;
     *   if (f != null && f.getClass().getName().equals(JavaNetRouting.FACTORY_CLASS)) ((Runnable) f).run();
     * }</pre>
     */
    private static void insertHandover(MethodVisitor mv, String owner) {
        Label skip = new Label();
        Label go = new Label();
        Object[] locals = {FACTORY};
        mv.visitFieldInsn(Opcodes.GETSTATIC, owner, "factory", "L" + FACTORY + ";");
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, skip);
        mv.visitInsn(Opcodes.DUP);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/Object", "getClass", "()Ljava/lang/Class;", false);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/Class", "getName", "()Ljava/lang/String;", false);
        mv.visitLdcInsn(JavaNetRouting.FACTORY_CLASS);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/String", "equals", "(Ljava/lang/Object;)Z", false);
        mv.visitJumpInsn(Opcodes.IFEQ, skip);
        mv.visitTypeInsn(Opcodes.CHECKCAST, "java/lang/Runnable");
        mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, "java/lang/Runnable", "run", "()V", true);
        mv.visitJumpInsn(Opcodes.GOTO, go);
        mv.visitLabel(skip);
        mv.visitFrame(Opcodes.F_NEW, 1, locals, 1, new Object[] {FACTORY});
        mv.visitInsn(Opcodes.POP);
        mv.visitLabel(go);
        mv.visitFrame(Opcodes.F_NEW, 1, locals, 0, new Object[0]);
    }
}
