#pragma once
// Private: wires a Topology from its ClusterSpec (one function per kind of wiring).
namespace trnsim::net {
class Topology;
class TopologyBuilder {
 public:
  static void build(Topology& t);

 private:
  static void reserve(Topology& t);
  static void chips(Topology& t);
  static void torus(Topology& t);
  static void ultraserver_ring(Topology& t);
  static void switched(Topology& t);
  static void nvswitch(Topology& t);
  static void clos(Topology& t);
};
}  // namespace trnsim::net
