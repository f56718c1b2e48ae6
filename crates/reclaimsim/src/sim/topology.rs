//! TEMPORARY stand-in (replaced by the topo branch's file).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Topology {
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    pub nodes: u32,
}
impl Topology {
    pub fn flat(cpus: u32, nodes: u32) -> Self {
        Topology {
            sockets: 1,
            cores_per_socket: cpus,
            threads_per_core: 1,
            nodes,
        }
    }
    pub fn nr_cpus(&self) -> u32 {
        self.sockets * self.cores_per_socket * self.threads_per_core
    }
    pub fn socket_of(&self, cpu: u32) -> u32 {
        (cpu % (self.sockets * self.cores_per_socket)) / self.cores_per_socket
    }
    pub fn core_of(&self, cpu: u32) -> u32 {
        cpu % (self.sockets * self.cores_per_socket)
    }
    pub fn siblings(&self, cpu: u32) -> impl Iterator<Item = u32> + '_ {
        let n = self.sockets * self.cores_per_socket;
        let core = cpu % n;
        (0..self.threads_per_core)
            .map(move |t| t * n + core)
            .filter(move |&c| c != cpu)
    }
    pub fn node_of(&self, cpu: u32) -> u32 {
        let n = self.sockets * self.cores_per_socket;
        ((cpu % n) as u64 * self.nodes as u64 / n as u64) as u32
    }
}
