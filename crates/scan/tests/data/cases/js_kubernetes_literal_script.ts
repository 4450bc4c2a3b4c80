// expect: none
import * as k8s from "@kubernetes/client-node";
const kexec = new k8s.Exec(new k8s.KubeConfig());
export async function listRoot(ns: string, pod: string) {
  await kexec.exec(ns, pod, "main", ["/bin/sh", "-c", "ls /"], null, null, null, false);
}
