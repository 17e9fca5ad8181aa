#include "cascade/agent/registration_spec.hpp"

#include <gtest/gtest.h>

namespace cascade::agent {
namespace {

proto::Registration ok(std::string_view spec) {
  auto parsed = parse_registration(spec);
  EXPECT_TRUE(std::holds_alternative<proto::Registration>(parsed)) << std::get<std::string>(parsed);
  return std::get<proto::Registration>(parsed);
}

std::string error(std::string_view spec) {
  auto parsed = parse_registration(spec);
  EXPECT_TRUE(std::holds_alternative<std::string>(parsed));
  return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : "";
}

TEST(RegistrationSpec, ServiceAndAddressWithDefaults) {
  auto r = ok("healthmanager-HealthManagerServerWorker-/hm/cache/q=10.0.0.7:8080");
  EXPECT_EQ(r.service.name, "healthmanager-HealthManagerServerWorker-/hm/cache/q");
  EXPECT_EQ(r.service.group, "default");
  EXPECT_EQ(r.instance.address, "10.0.0.7:8080");
  EXPECT_EQ(r.instance.id, "10.0.0.7:8080");
  EXPECT_EQ(r.instance.weight, 100u);
  EXPECT_EQ(r.instance.status, proto::InstanceStatus::kUp);
}

TEST(RegistrationSpec, EveryOption) {
  auto r =
      ok("orders=http://10.0.0.7:8080/"
         "api,weight=50,zone=dc1-a,id=o1,group=blue,status=STARTING,meta.version=1.2");
  EXPECT_EQ(r.instance.address, "http://10.0.0.7:8080/api");
  EXPECT_EQ(r.instance.weight, 50u);
  EXPECT_EQ(r.instance.zone, "dc1-a");
  EXPECT_EQ(r.instance.id, "o1");
  EXPECT_EQ(r.service.group, "blue");
  EXPECT_EQ(r.instance.status, proto::InstanceStatus::kStarting);
  EXPECT_EQ(r.instance.metadata.at("version"), "1.2");
}

TEST(RegistrationSpec, BadInputSaysWhatIsWrong) {
  EXPECT_NE(error("orders").find("SERVICE=ADDRESS"), std::string::npos);
  EXPECT_NE(error("orders=a:1,weight=heavy").find("weight"), std::string::npos);
  EXPECT_NE(error("orders=a:1,weight=-1").find("weight"), std::string::npos);
  EXPECT_NE(error("orders=a:1,status=ALIVE").find("status"), std::string::npos);
  EXPECT_NE(error("orders=a:1,colour=red").find("colour"), std::string::npos);
  EXPECT_NE(error("=a:1").find("service name"), std::string::npos);
  EXPECT_NE(error("orders=").find("address"), std::string::npos);
  EXPECT_NE(error(std::string(300, 's') + "=a:1").find("service name"), std::string::npos);
}

TEST(ServiceKeyText, GroupAfterTheLastAt) {
  EXPECT_EQ(parse_service_key("orders"), (proto::ServiceKey{"orders", "default"}));
  EXPECT_EQ(parse_service_key("orders@blue"), (proto::ServiceKey{"orders", "blue"}));
}

}  // namespace
}  // namespace cascade::agent
