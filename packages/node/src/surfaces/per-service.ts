/**
 * `make(service)` once per offer service, kept as long as that service lives: what a surface
 * derives from its node (a tool description, an agent card) is built once for a node, and in
 * platform mode once per tenant loaded, dropped with the tenant.
 */
export function perService<S extends object, T>(make: (service: S) => T): (service: S) => T {
  const made = new WeakMap<S, T>();
  return (service) => {
    let v = made.get(service);
    if (v === undefined) {
      v = make(service);
      made.set(service, v);
    }
    return v;
  };
}
