package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gardener/machine-controller-manager/pkg/apis/machine/v1alpha1"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/driver"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/machinecodes/codes"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/machinecodes/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// nodes is an in-memory Node client with what the driver calls (client-go's fake clientset would compile every
// API group's fakes for four methods); any other method panics through the nil embedded interface.
type nodes struct {
	corev1client.NodeInterface
	items map[string]*corev1.Node
}

func newNodes() *nodes { return &nodes{items: map[string]*corev1.Node{}} }

func (n *nodes) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Node, error) {
	if node, ok := n.items[name]; ok {
		return node.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
}

func (n *nodes) List(_ context.Context, _ metav1.ListOptions) (*corev1.NodeList, error) {
	list := &corev1.NodeList{}
	for _, node := range n.items {
		list.Items = append(list.Items, *node.DeepCopy())
	}
	return list, nil
}

func (n *nodes) Create(_ context.Context, node *corev1.Node, _ metav1.CreateOptions) (*corev1.Node, error) {
	if _, ok := n.items[node.Name]; ok {
		return nil, apierrors.NewAlreadyExists(corev1.Resource("nodes"), node.Name)
	}
	n.items[node.Name] = node.DeepCopy()
	return node.DeepCopy(), nil
}

func (n *nodes) Delete(_ context.Context, name string, _ metav1.DeleteOptions) error {
	if _, ok := n.items[name]; !ok {
		return apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	delete(n.items, name)
	return nil
}

const dualStack = `{"image":"kwok:1","labels":{"worker.gardener.cloud/pool":"web"},"networks":[
 {"nodes":"10.250.0.0/16","pods":"100.96.0.0/11","podMaskSize":24,"firstHost":2},
 {"nodes":"fd00:250::/64","pods":"fd00:96::/56","podMaskSize":64,"firstHost":2}]}`

func class(name, providerSpec string) *v1alpha1.MachineClass {
	return &v1alpha1.MachineClass{ObjectMeta: metav1.ObjectMeta{Name: name}, ProviderSpec: runtime.RawExtension{Raw: []byte(providerSpec)}}
}

func userData(token string) *corev1.Secret {
	script := "#!/bin/bash\nprintf '%s' '" + token + "' > '/var/lib/gardener-node-agent/credentials/bootstrap-token'\n"
	return &corev1.Secret{Data: map[string][]byte{"userData": []byte(script)}}
}

// accepts authenticates exactly the given tokens, as the shoot's API would.
func accepts(tokens ...string) TokenReviewer {
	return func(_ context.Context, token string) (string, error) {
		for _, t := range tokens {
			if t == token {
				id, _, _ := strings.Cut(token, ".")
				return "system:bootstrap:" + id, nil
			}
		}
		return "", errors.New("Unauthorized")
	}
}

func create(t *testing.T, d *Driver, machine, token string) (*driver.CreateMachineResponse, error) {
	t.Helper()
	return d.CreateMachine(context.Background(), &driver.CreateMachineRequest{
		Machine: &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: machine}}, MachineClass: class("web-z1-abc", dualStack), Secret: userData(token),
	})
}

func code(err error) codes.Code {
	s, _ := status.FromError(err)
	if s == nil {
		return codes.OK
	}
	return s.Code()
}

func TestCreateRegistersAddressedNodes(t *testing.T) {
	client := newNodes()
	d := &Driver{Nodes: client, Review: accepts("abcdef.0123456789abcdef", "bcdefa.0123456789abcdef")}
	first, err := create(t, d, "m-1", "abcdef.0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if first.ProviderID != "kwok://m-1" || first.NodeName != "m-1" {
		t.Fatalf("response %+v", first)
	}
	if _, err := create(t, d, "m-2", "bcdefa.0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	node, err := client.Get(context.Background(), "m-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Status.Addresses[0].Address + " " + node.Status.Addresses[1].Address; got != "10.250.0.3 fd00:250::3" {
		t.Errorf("second node's addresses: %s", got)
	}
	if got := strings.Join(node.Spec.PodCIDRs, " "); got != "100.96.1.0/24 fd00:96:0:1::/64" {
		t.Errorf("second node's pod ranges: %s", got)
	}
	if node.Labels["worker.gardener.cloud/pool"] != "web" || node.Annotations[kwokAnnotation] != "fake" {
		t.Errorf("labels %v annotations %v", node.Labels, node.Annotations)
	}
}

func TestDeletedSlotIsReused(t *testing.T) {
	d := &Driver{Nodes: newNodes(), Review: accepts("abcdef.0123456789abcdef")}
	for _, m := range []string{"a", "b", "c"} {
		if _, err := create(t, d, m, "abcdef.0123456789abcdef"); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := d.DeleteMachine(ctx, &driver.DeleteMachineRequest{Machine: &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := create(t, d, "d", "abcdef.0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Addresses[0].Address != "10.250.0.3" {
		t.Errorf("the freed slot is not reused: %v", resp.Addresses)
	}
	if _, err := d.GetMachineStatus(ctx, &driver.GetMachineStatusRequest{Machine: &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}); code(err) != codes.NotFound {
		t.Errorf("status of a deleted machine: %v", err)
	}
	list, err := d.ListMachines(ctx, &driver.ListMachinesRequest{MachineClass: class("web-z1-abc", dualStack)})
	if err != nil || len(list.MachineList) != 3 || list.MachineList["kwok://d"] != "d" {
		t.Errorf("list: %v %v", list, err)
	}
	other, _ := d.ListMachines(ctx, &driver.ListMachinesRequest{MachineClass: class("other", dualStack)})
	if len(other.MachineList) != 0 {
		t.Errorf("another class lists this class's machines: %v", other.MachineList)
	}
}

func TestRefusedToken(t *testing.T) {
	client := newNodes()
	d := &Driver{Nodes: client, Review: accepts("abcdef.0123456789abcdef")}
	for token, want := range map[string]codes.Code{
		"zzzzzz.0123456789abcdef": codes.Unauthenticated,
		"<<BOOTSTRAP_TOKEN>>":     codes.InvalidArgument,
	} {
		if _, err := create(t, d, "m", token); code(err) != want {
			t.Errorf("token %q: %v, want %v", token, err, want)
		}
	}
	nodes, _ := client.List(context.Background(), metav1.ListOptions{})
	if len(nodes.Items) != 0 {
		t.Errorf("a refused machine got a node")
	}
}

func TestClassWithoutNetworks(t *testing.T) {
	d := &Driver{Nodes: newNodes(), Review: accepts("abcdef.0123456789abcdef")}
	_, err := d.CreateMachine(context.Background(), &driver.CreateMachineRequest{
		Machine: &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, MachineClass: class("c", `{"image":"x"}`), Secret: userData("abcdef.0123456789abcdef"),
	})
	if code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "networks") {
		t.Errorf("got %v", err)
	}
}
