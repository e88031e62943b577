// machine-controller-manager-provider-kwok: MCM's machine controller with a driver whose machines are kwok Nodes in
// the target (shoot) cluster, so a machine lives outside every seed as a VM lives in a cloud account.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/gardener/machine-controller-manager/pkg/util/provider/app"
	"github.com/gardener/machine-controller-manager/pkg/util/provider/app/options"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func main() {
	s := options.NewMCServer()
	s.AddFlags(pflag.CommandLine)
	klog.InitFlags(nil)
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()

	config, err := clientcmd.BuildConfigFromFlags("", s.TargetKubeconfig)
	if err != nil {
		fail(fmt.Errorf("--target-kubeconfig: %w", err))
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail(err)
	}
	if err := app.Run(s, &Driver{Nodes: client.CoreV1().Nodes(), Review: reviewer(config)}); err != nil {
		fail(err)
	}
}

// reviewer asks the shoot's API who a token is (SelfSubjectReview), reaching it as the target kubeconfig does
// but with nothing of that kubeconfig's own credentials.
func reviewer(target *rest.Config) TokenReviewer {
	anonymous := rest.AnonymousClientConfig(target)
	return func(ctx context.Context, token string) (string, error) {
		config := rest.CopyConfig(anonymous)
		config.BearerToken = token
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return "", err
		}
		review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return review.Status.UserInfo.Username, nil
	}
}

func fail(err error) {
	klog.Error(err)
	os.Exit(1)
}
