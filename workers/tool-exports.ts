/**
 * Where a tool module's declaration and behaviour live: one default-exported object, or its named
 * exports. Both workers read a module this same way.
 */
export function toolSource(namespace: Record<string, unknown>): Record<string, unknown> {
  const fallback = namespace['default'];
  return typeof fallback === 'object' && fallback !== null && !('name' in namespace)
    ? (fallback as Record<string, unknown>)
    : namespace;
}
