package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"regexp"
	"strings"
	"sync"

	"github.com/gardener/machine-controller-manager/pkg/apis/machine/v1alpha1"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/driver"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/machinecodes/codes"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/machinecodes/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
)

const (
	// providerPrefix marks the nodes this driver made; the rest of a provider ID is the machine's name.
	providerPrefix = "kwok://"
	// kwok manages (simulates the kubelet of) the nodes that carry this annotation, as in its default configuration.
	kwokAnnotation = "kwok.x-k8s.io/node"
	// classAnnotation records the MachineClass a node was made from, so that ListMachines answers per class.
	classAnnotation = "machine.arbor.dev/class"
)

// tokenLine finds the bootstrap token in arbor's user data: the raw file node-agent's bootstrap reads it from.
var tokenLine = regexp.MustCompile(`printf '%s' '([^']*)' > '[^']*/credentials/bootstrap-token'`)

// Network is one IP family of the shoot's node addressing, as the class's providerSpec names it.
type Network struct {
	Nodes       string `json:"nodes"`
	Pods        string `json:"pods"`
	PodMaskSize int    `json:"podMaskSize"`
	FirstHost   int    `json:"firstHost"`
}

// ProviderSpec is the local MachineClass's providerSpec.
type ProviderSpec struct {
	Image    string            `json:"image"`
	Labels   map[string]string `json:"labels"`
	Networks []Network         `json:"networks"`
}

// TokenReviewer tells who a bearer token authenticates as in the shoot, or an error when it does not.
type TokenReviewer func(ctx context.Context, token string) (string, error)

// Driver makes each machine a kwok Node in the target (shoot) cluster.
type Driver struct {
	// Nodes is all the driver touches in the shoot.
	Nodes  corev1client.NodeInterface
	Review TokenReviewer
	// mu serialises creations, so two machines never take the same address.
	mu sync.Mutex
}

var _ driver.Driver = (*Driver)(nil)

func providerID(machine string) string { return providerPrefix + machine }

func spec(class *v1alpha1.MachineClass) (*ProviderSpec, error) {
	var s ProviderSpec
	if class == nil || len(class.ProviderSpec.Raw) == 0 {
		return nil, status.Error(codes.InvalidArgument, "machine class has no providerSpec")
	}
	if err := json.Unmarshal(class.ProviderSpec.Raw, &s); err != nil {
		return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("machine class %s: providerSpec: %v", class.Name, err))
	}
	if len(s.Networks) == 0 {
		return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("machine class %s: providerSpec.networks is empty", class.Name))
	}
	return &s, nil
}

// bootstrapToken is the token MCM wrote into the user data in place of its placeholder.
func bootstrapToken(secret *corev1.Secret) (string, error) {
	if secret == nil {
		return "", status.Error(codes.InvalidArgument, "no user-data secret")
	}
	m := tokenLine.FindSubmatch(secret.Data["userData"])
	if m == nil {
		return "", status.Error(codes.InvalidArgument, "user data writes no bootstrap token")
	}
	token := string(m[1])
	if strings.HasPrefix(token, "<<") {
		return "", status.Error(codes.InvalidArgument, "user data still holds the bootstrap-token placeholder")
	}
	return token, nil
}

// checkToken refuses a machine whose bootstrap token the shoot's API does not accept, as a kubelet's TLS
// bootstrap would fail with it.
func (d *Driver) checkToken(ctx context.Context, machine string, secret *corev1.Secret) error {
	token, err := bootstrapToken(secret)
	if err != nil {
		return err
	}
	id, _, _ := strings.Cut(token, ".")
	user, err := d.Review(ctx, token)
	if err != nil {
		return status.Error(codes.Unauthenticated, fmt.Sprintf("machine %s: its bootstrap token does not authenticate against the shoot's API: %v", machine, err))
	}
	if user != "system:bootstrap:"+id {
		return status.Error(codes.Unauthenticated, fmt.Sprintf("machine %s: its bootstrap token authenticates as %q, not as bootstrap token %q", machine, user, id))
	}
	klog.Infof("machine %s: its bootstrap token authenticates as %s", machine, user)
	return nil
}

// CreateMachine registers the machine's Node, addressed from the lowest slot no other node holds.
func (d *Driver) CreateMachine(ctx context.Context, req *driver.CreateMachineRequest) (*driver.CreateMachineResponse, error) {
	name := req.Machine.Name
	s, err := spec(req.MachineClass)
	if err != nil {
		return nil, err
	}
	if err := d.checkToken(ctx, name, req.Secret); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	node, err := d.Nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err = d.register(ctx, name, req.MachineClass.Name, s)
	}
	if err != nil {
		return nil, status.Error(codes.Internal, fmt.Sprintf("machine %s: %v", name, err))
	}
	return &driver.CreateMachineResponse{ProviderID: node.Spec.ProviderID, NodeName: node.Name, Addresses: node.Status.Addresses}, nil
}

func (d *Driver) register(ctx context.Context, name, class string, s *ProviderSpec) (*corev1.Node, error) {
	nodes, err := d.Nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	slot, err := freeSlot(nodes.Items, s.Networks)
	if err != nil {
		return nil, err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{"kubernetes.io/hostname": name, "type": "kwok"},
			Annotations: map[string]string{kwokAnnotation: "fake", classAnnotation: class},
		},
		Spec: corev1.NodeSpec{ProviderID: providerID(name)},
	}
	for k, v := range s.Labels {
		node.Labels[k] = v
	}
	for _, n := range s.Networks {
		ip, pods, err := n.at(slot)
		if err != nil {
			return nil, err
		}
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
		node.Spec.PodCIDRs = append(node.Spec.PodCIDRs, pods)
	}
	node.Spec.PodCIDR = node.Spec.PodCIDRs[0]
	node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	created, err := d.Nodes.Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	klog.Infof("machine %s: node registered with %v", name, created.Status.Addresses)
	return created, nil
}

// at is the node address and pod range of one family at a slot.
func (n Network) at(slot int) (string, string, error) {
	_, nodes, err := net.ParseCIDR(n.Nodes)
	if err != nil {
		return "", "", fmt.Errorf("providerSpec.networks: nodes %q: %v", n.Nodes, err)
	}
	_, pods, err := net.ParseCIDR(n.Pods)
	if err != nil {
		return "", "", fmt.Errorf("providerSpec.networks: pods %q: %v", n.Pods, err)
	}
	ip := offset(nodes.IP, big.NewInt(int64(n.FirstHost+slot)))
	if !nodes.Contains(ip) {
		return "", "", fmt.Errorf("node range %s is full", n.Nodes)
	}
	bits := len(pods.IP) * 8
	size := new(big.Int).Lsh(big.NewInt(1), uint(bits-n.PodMaskSize))
	podNet := offset(pods.IP, new(big.Int).Mul(size, big.NewInt(int64(slot))))
	if !pods.Contains(podNet) {
		return "", "", fmt.Errorf("pod range %s is full", n.Pods)
	}
	return ip.String(), fmt.Sprintf("%s/%d", podNet, n.PodMaskSize), nil
}

// slotOf is the slot an address takes in this family, or -1.
func (n Network) slotOf(address string) int {
	_, nodes, err := net.ParseCIDR(n.Nodes)
	ip := net.ParseIP(address)
	if err != nil || ip == nil || !nodes.Contains(ip) {
		return -1
	}
	if v4 := ip.To4(); v4 != nil && len(nodes.IP) == net.IPv4len {
		ip = v4
	}
	diff := new(big.Int).Sub(new(big.Int).SetBytes(ip), new(big.Int).SetBytes(nodes.IP))
	return int(diff.Int64()) - n.FirstHost
}

func offset(base net.IP, by *big.Int) net.IP {
	if v4 := base.To4(); v4 != nil {
		base = v4
	}
	sum := new(big.Int).Add(new(big.Int).SetBytes(base), by).Bytes()
	out := make(net.IP, len(base))
	copy(out[len(out)-len(sum):], sum)
	return out
}

// freeSlot is the lowest slot that no node's address takes in any family.
func freeSlot(nodes []corev1.Node, networks []Network) (int, error) {
	used := map[int]bool{}
	for _, node := range nodes {
		for _, a := range node.Status.Addresses {
			if a.Type != corev1.NodeInternalIP {
				continue
			}
			for _, n := range networks {
				if s := n.slotOf(a.Address); s >= 0 {
					used[s] = true
				}
			}
		}
	}
	for slot := 0; ; slot++ {
		if !used[slot] {
			return slot, nil
		}
	}
}

// InitializeMachine has nothing to do for a kwok node.
func (d *Driver) InitializeMachine(context.Context, *driver.InitializeMachineRequest) (*driver.InitializeMachineResponse, error) {
	return nil, status.Error(codes.Unimplemented, "kwok machines need no initialization")
}

// DeleteMachine removes the machine's Node; one already gone is deleted.
func (d *Driver) DeleteMachine(ctx context.Context, req *driver.DeleteMachineRequest) (*driver.DeleteMachineResponse, error) {
	name := req.Machine.Name
	err := d.Nodes.Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, status.Error(codes.Internal, fmt.Sprintf("machine %s: %v", name, err))
	}
	klog.Infof("machine %s: node deleted", name)
	return &driver.DeleteMachineResponse{}, nil
}

// GetMachineStatus answers NotFound until the machine's Node exists, as a cloud does until its VM exists.
func (d *Driver) GetMachineStatus(ctx context.Context, req *driver.GetMachineStatusRequest) (*driver.GetMachineStatusResponse, error) {
	name := req.Machine.Name
	node, err := d.Nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && node.Spec.ProviderID != providerID(name)) {
		return nil, status.Error(codes.NotFound, fmt.Sprintf("machine %s: no kwok node", name))
	}
	if err != nil {
		return nil, status.Error(codes.Internal, fmt.Sprintf("machine %s: %v", name, err))
	}
	return &driver.GetMachineStatusResponse{ProviderID: node.Spec.ProviderID, NodeName: node.Name, Addresses: node.Status.Addresses}, nil
}

// ListMachines maps the provider ID of each node made from the class to its machine's name.
func (d *Driver) ListMachines(ctx context.Context, req *driver.ListMachinesRequest) (*driver.ListMachinesResponse, error) {
	nodes, err := d.Nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	out := map[string]string{}
	for _, node := range nodes.Items {
		id := node.Spec.ProviderID
		if strings.HasPrefix(id, providerPrefix) && (req.MachineClass == nil || node.Annotations[classAnnotation] == req.MachineClass.Name) {
			out[id] = strings.TrimPrefix(id, providerPrefix)
		}
	}
	return &driver.ListMachinesResponse{MachineList: out}, nil
}

// GetVolumeIDs: kwok nodes attach no volumes.
func (d *Driver) GetVolumeIDs(context.Context, *driver.GetVolumeIDsRequest) (*driver.GetVolumeIDsResponse, error) {
	return &driver.GetVolumeIDsResponse{}, nil
}
